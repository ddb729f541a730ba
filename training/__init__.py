"""Network training (self-play and teacher games, the PyTorch network, export, the gated
loop): the only package that imports torch or ray. Converting and quantizing nets is networks/.

OpenMP threads (torch's CPU kernels) sleep instead of spinning while they wait: training shares
the cores with self-play workers, and spinning threads that wait for a descheduled peer made a
two-thread training step ten times slower on two loaded cores (bench/train.py). The variable is
read when torch loads OpenMP, so it is set here, before any training module imports torch.
"""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
