"""The evaluators: the contract between the search and a leaf evaluator (PositionBatch in,
Evaluation out), the input features, the ONNX network session, random playouts and raw network
outputs. Builds on engine.rules alone."""
