"""A stand-in for `torch` in the check's slim venv (run.sh copies it into site-packages).

skyrl 0.3.0's Tinker API imports skyrl.backends.renderer at start-up, which imports torch only for image inputs
(`torch.Tensor` isinstance checks, `torch.cat` of pixel values). The check sends text only; the real torch wheel
with its CUDA dependencies is ~5 GB. Anything beyond those two names fails loudly.
"""

__version__ = "0.0.0+agentrl-check-shim"


class Tensor:
    """Never instantiated: only the target of isinstance checks on image inputs."""


def cat(*_args, **_kwargs):
    raise RuntimeError("torch shim: image inputs need the real torch (use VENV=full)")


def __getattr__(name):
    raise AttributeError(f"torch shim: torch.{name} is not available in the slim check venv (use VENV=full)")
