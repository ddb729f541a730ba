"""The tree search: the array tree, its selection and backup kernels, the driver that batches
leaves for an evaluator, limits, results, the move choice and the Gumbel root search. Builds on
engine.rules and engine.evaluators."""
