"""Self-Route's prompts (Li et al. 2024): the RAG-and-Route clause and the LongBench-style dataset
prompt of its table 9, used for the long-context step."""

UNANSWERABLE_CLAUSE = "Write unanswerable if the query can not be answered based on the provided text."  # sec. 3

LONG_CONTEXT = """Answer the question based on the given passages. Only give me the answer and do not output any other words. If the question cannot be answered based on the information in the article, write "unanswerable". The following are given passages.
{context}
Answer the question based on the given passages. Only give me the answer and do not output any other words. If the question cannot be answered based on the information in the article, write "unanswerable". Question: {question} Answer:"""  # table 9 (HotpotQA / MuSiQue row)

# lines that open a section of the long-context prompt (see generation.ECHO_HEADERS)
ECHO_HEADERS = r"(?im)^\s*(?:question\s*:|passage \d+\s*:|answer the question based on the given passages)"
