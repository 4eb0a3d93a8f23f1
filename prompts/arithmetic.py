"""The calculator's question to the model (our addition, issue 34: none of the seeds has one; the
shape follows TAT-QA's derivations, e.g. "(1,092-823)/823"). The model writes the expression over
numbers it copies from the passages; Python computes it (llm/arithmetic.py)."""

EXPRESSION = """Read the passages and the question. If the answer is computed from numbers in the passages (a difference, a change, a sum, an average, a ratio, a percentage), write the calculation as one arithmetic expression that uses only numbers copied exactly from the passages, with + - * / and parentheses. For a percentage or a percentage change, multiply by 100. Do not compute the result yourself.

Passages:
{passages}

Question: {question}

Reply with JSON only: {{"expression": "<the expression>", "sources": ["E1"]}}, naming the passages the numbers come from; or {{"expression": "none", "sources": []}} if no calculation is needed."""
