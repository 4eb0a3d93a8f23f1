"""LongRAG's prompts, quoted from its tables 16-18 (the instruction formats of LRGInstruction)."""

EXTRACTOR = """{content}

Based on the above background, please output the information you need to cite to answer the question below.
{question}"""  # table 16, [RESULT]

COT = """{content}

Please combine the above information and give your thought process for the following
Question:{question}"""  # table 17, [RESULT-1]

FILTER = """Given an article:{content}
Question:{question}
Thought process for the question:{cot}
Your task is to use the thought process provided to decide whether you need to cite the article to answer this question. If you need to cite the article, set the status value to True. If not, set the status value to False. Please output the response in the following json format:
{{"status": {{the value of status}}}}"""  # table 17, [RESULT-2]

# table 18; {extra} is where our additions go (Self-Route's unanswerable clause, the citation line)
GENERATOR = """{content}

Based on the above information, Only give me the answer and do not output any other words.{extra}
Question:{question}"""
