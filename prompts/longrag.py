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

# Ours: table 17's two stages in one call (filter_mode="joint"), so the passages are read once: the
# CoT instruction ([RESULT-1]) over all of them, then the filter's decision ([RESULT-2]) for each.
JOINT_FILTER = """{content}

Please combine the above information and give your thought process for the following
Question:{question}
Then use the thought process to decide, for each passage above, whether you need to cite it to answer this question. Please output the response in the following json format:
{{"thought": "{{your thought process}}", "cite": [{{the labels of the passages to cite, e.g. "E1"}}]}}"""
