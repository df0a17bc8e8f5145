"""Speed predicted from a GPU's specs: count what one step does, then time it with a roofline.

`count` records each op's floating-point operations and bytes moved on fake tensors;
`roofline` turns those into seconds on a named GPU; `predict` builds the step for a model
(`benchlib fit`'s models and language models) and reports throughput.
"""
