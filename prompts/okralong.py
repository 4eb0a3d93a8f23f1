"""OkraLong's prompts, quoted from its appendix (tables 8, 9 and 10); typos of the original kept."""

ANALYZER_SYSTEM = """Given a question and the document context, please answer three questions:

1. What type of question is being asked? The types include: extractive, abstractive, arithmetic, multi-bridge, and multisource. Extractive means the query is directly factoid; summarizing means the query needs large context and conclusion; arithemtic means the query needs numerical calculation; multi-bridge means the answer requires multiple bridging steps to get the answer;multi-source means the answer requires information from multiple facts (e.g. comparison questions).

2. Is the key information of the question more exact or semantic (according to both the question and the context)? The answer should be "exact", "semantic" or "same".

3. Does the provided context contain the enough information to answer the question? The answer should be either "yes" or "no".

The final answer should be in the format of a dictionary:

{"question-type": "extractive", "info-type": "exact", "containing": "yes"}.

Please strictly follow the format and no explanation is needed."""  # table 8

ANALYZER_USER = "### Context: {context} ### Question: {question} ### Answer:"

SPLITTER_SYSTEM = """Given a question, and this question may need the information from multiple sources.

Please split this question into multiple sub-questions, each of which can be answered by a single source. The final answer should be several sub-questions separated by the line-breaker."""  # table 9

SPLITTER_DEMO_USER = "Which university has the larger campus, University of New Haven or University of West Florida?"
SPLITTER_DEMO_ASSISTANT = (
    "What is the campus size of University of New Haven?\nWhat is the campus size of University of West Florida?"
)
SPLITTER_USER = "{question}"

REASONER_SYSTEM = """Given a question, which may need multiple steps to get the final answer. Please first get the existing evidence for the question based on the given context, and then generate a next-step query to query additional information. If the question can already be totally answered, you should output '### Answer: The answer is: <answer>' at the end. Otherwise, output 'None'. The answer should be based only on the context."""  # table 10

REASONER_DEMO_USER = (
    "### Context: 100 Rifles is directed by Tom Gries and starring Jim Brown and Raquel Welch. "
    "### Question: 100 Rifles is a western film, starring an actress of what nationality?"
)
REASONER_DEMO_ASSISTANT = (
    "### Evidence: The main actress in 100 Rifles is Raquel Welch. ### Next-Query: What is "
    "the nationality of Raquel Welch? ### Answer: None"
)
REASONER_USER = "### Context: {context} ### Question:{question}"
