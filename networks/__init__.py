"""Network files: KataGo's model format read into numpy, converted to ONNX, quantized to int8,
and the per-user cache of those conversions.

Steps the engine takes at start-up (run_engine) and training takes when it exports or plays
against KataGo nets, so this package needs no torch: numpy, onnx and onnxruntime only. It may
import engine/ (features, the ONNX evaluator), never gtp/, tournament/ or training/.
"""
