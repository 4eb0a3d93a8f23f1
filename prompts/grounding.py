"""The grounding check's question to the model (our addition: none of the seeds checks an answer
after generation). Asked only when the lexical check is unsure (llm/grounding.py), with the passages
the answer cites; the reply is one structured verdict."""

SUPPORT = """Below are passages from a document, a question, and an answer someone gave to it.
Decide whether the passages state or directly imply the answer. Judge only by the passages: if the answer adds a fact, a name or a number that the passages do not give (a calculation from numbers the passages give counts as given), it is not supported.

Passages:
{passages}

Question: {question}
Answer: {answer}

Reply with JSON only: {{"supported": true}} or {{"supported": false}}."""
