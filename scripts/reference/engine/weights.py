"""Deterministic weights both sides build bit for bit: this file (numpy) and
src/engine/reference-parity-weights.ts (TypeScript). No weights are checked in, only what PyTorch
computes from them.

Element i of the array with stream number s, under a model's seed:

    key   = fmix32((seed * 0x9E3779B1 + s * 0x85EBCA77 + 0x27D4EB2F) mod 2^32)
    h     = fmix32((i * 0x9E3779B1 + key) mod 2^32)
    u     = (h >> 8) / 2^24                       exactly representable, in [0, 1)
    value = float32(offset + (2u - 1) * scale)    float64 arithmetic, then one rounding to float32

fmix32 is MurmurHash3's finaliser (Appleby 2011). Every step is integer arithmetic mod 2^32 or one
IEEE float64 operation in a fixed order, so numpy and JavaScript agree exactly. Elements run over
agentrl's layout (config.ts: linear weights [in, out], row-major); PyTorch gets the transposes.
"""

import numpy as np

MASK = 0xFFFFFFFF


def fmix32(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's 32-bit finaliser on a uint32 array (numpy wraps the products mod 2^32)."""
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def stream_hashes(seed: int, stream: int, count: int) -> np.ndarray:
    """The uint32 hashes of elements 0..count-1 of one stream."""
    start = (seed * 0x9E3779B1 + stream * 0x85EBCA77 + 0x27D4EB2F) & MASK
    key = fmix32(np.array([start], dtype=np.uint32))[0]
    index = np.arange(count, dtype=np.uint32)
    return fmix32(index * np.uint32(0x9E3779B1) + key)


def uniform_array(seed: int, stream: int, shape: list[int], scale: float, offset: float) -> np.ndarray:
    """float32 values in [offset - scale, offset + scale), agentrl's layout (row-major `shape`)."""
    count = int(np.prod(shape))
    unit = (stream_hashes(seed, stream, count) >> np.uint32(8)).astype(np.float64) / 16777216.0
    return (offset + (2.0 * unit - 1.0) * scale).astype(np.float32).reshape(shape)


def sample_indices(size: int) -> np.ndarray:
    """Which elements of a large array the fixtures keep: all of a small one (<= 128), else the first
    64 and 64 more at an even stride over the rest (the same rule in the TypeScript test)."""
    if size <= 128:
        return np.arange(size)
    stride = (size - 64) // 64
    return np.concatenate([np.arange(64), 64 + stride * np.arange(64)])


def bits_checksum(values: np.ndarray) -> int:
    """sum_i bits(x_i) * (2i + 1) mod 2^32 over the float32 bit patterns: equal only for bit-identical arrays."""
    bits = np.ascontiguousarray(values, dtype=np.float32).reshape(-1).view(np.uint32)
    odd = (2 * np.arange(bits.size, dtype=np.uint64) + 1).astype(np.uint32)
    return int(np.sum(bits * odd, dtype=np.uint64) & np.uint64(MASK))
