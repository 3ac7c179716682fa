"""How smooth patch-filter components are: their energy in low spatial frequencies.

The ViT paper's principal components of the patch-embedding filters (Dosovitskiy et al. 2021, Fig. 7)
look like smooth basis functions. "Smooth" is measured here as the share of a component's energy
in the low corner of its 2-D DCT-II spectrum, frequencies u + v < P/2 (u, v = 0 … P−1, summed over the
colour channels; the transform is orthonormal, so the energies add up to the component's squared norm).
A component of white noise spreads its energy evenly over all P² frequencies, so its expected share
is the fraction of frequencies in that corner (16 % for 8×8 patches): :func:`noise_share`.
"""

from __future__ import annotations

import numpy as np

from attnviz.errors import InputError

__all__ = ["dct_matrix", "low_frequency_share", "noise_share", "filter_smoothness"]


def dct_matrix(P: int) -> np.ndarray:
    """The orthonormal DCT-II matrix (P, P): row u is the cosine of frequency u sampled at P pixels."""
    i = np.arange(P)
    m = np.cos(np.pi * (2 * i[None, :] + 1) * i[:, None] / (2 * P)) * np.sqrt(2.0 / P)
    m[0] /= np.sqrt(2.0)
    return m


def _low_corner(P: int) -> np.ndarray:
    i = np.arange(P)
    return np.add.outer(i, i) < P / 2


def low_frequency_share(component: np.ndarray) -> float:
    """Share of a (P, P, C) component's energy at spatial frequencies u + v < P/2 (2-D DCT-II per channel).

    Parameters
    ----------
    component : (P, P, C) one component as a small image, channels last (or (P, P): one channel).

    Returns
    -------
    float in [0, 1]; 0 for an all-zero component.
    """
    c = np.asarray(component, dtype=np.float64)
    if c.ndim == 2:
        c = c[..., None]
    if c.ndim != 3 or c.shape[0] != c.shape[1]:
        raise InputError(f"a filter component must be (P, P, C), got shape {c.shape}")
    d = dct_matrix(c.shape[0])
    coef = np.einsum("ux,xyc,vy->uvc", d, c, d)  # D · channel · Dᵀ for every channel
    energy = np.sum(coef**2, axis=-1)  # (P, P) summed over colours
    total = float(energy.sum())
    return float(energy[_low_corner(c.shape[0])].sum() / total) if total > 0 else 0.0


def noise_share(P: int) -> float:
    """The expected :func:`low_frequency_share` of white noise on P×P patches: the share of frequencies
    in the low corner (every frequency gets the same expected energy)."""
    return float(_low_corner(P).mean())


def filter_smoothness(components: np.ndarray, top: int) -> float:
    """Mean :func:`low_frequency_share` of the first ``top`` of (k, P, P, C) components (strongest first)."""
    comps = np.asarray(components)
    if top < 1 or top > len(comps):
        raise InputError(f"top must lie in 1 … {len(comps)}, got {top}")
    return float(np.mean([low_frequency_share(c) for c in comps[:top]]))
