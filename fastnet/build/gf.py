"""Finite-field arithmetic GF(q) for prime powers q = p^e, as tables (q is at most a few hundred here).

Elements are integers 0..q-1 read as base-p digit vectors (polynomial coefficients). Multiplication is modulo
the first monic irreducible polynomial of degree e found by search; that choice only relabels the field.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def prime_power(q: int) -> tuple[int, int] | None:
    """(p, e) with q = p**e and p prime, or None."""
    if q < 2:
        return None
    for p in range(2, int(q**0.5) + 1):
        if q % p == 0:
            e, rest = 0, q
            while rest % p == 0:
                rest //= p
                e += 1
            return (p, e) if rest == 1 else None
    return (q, 1)


def _poly_mulmod(a: list[int], b: list[int], mod: list[int], p: int) -> list[int]:
    e = len(mod) - 1
    prod = [0] * (2 * e - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                prod[i + j] = (prod[i + j] + x * y) % p
    for d in range(len(prod) - 1, e - 1, -1):  # reduce by the monic modulus
        c = prod[d]
        if c:
            for k in range(e + 1):
                prod[d - e + k] = (prod[d - e + k] - c * mod[k]) % p
    return prod[:e]


def _digits(x: int, p: int, e: int) -> list[int]:
    return [(x // p**i) % p for i in range(e)]


def _number(d: list[int], p: int) -> int:
    return sum(c * p**i for i, c in enumerate(d))


def _irreducible(p: int, e: int) -> list[int]:
    """Coefficients (low to high, monic) of an irreducible polynomial of degree e over GF(p)."""
    if e == 1:
        return [0, 1]
    for tail in range(p**e):
        mod = _digits(tail, p, e) + [1]
        if mod[0] == 0:
            continue
        # irreducible iff no root-free factorisation: test that x^(p^e) = x and gcd conditions via brute force
        # (q is small): the polynomial is irreducible iff the ring it defines has no zero divisors.
        q = p**e
        ok = True
        for a in range(1, q):
            da = _digits(a, p, e)
            for b in range(a, q):
                if not any(_poly_mulmod(da, _digits(b, p, e), mod, p)):
                    ok = False
                    break
            if not ok:
                break
        if ok:
            return mod
    raise ValueError(f"no irreducible polynomial of degree {e} over GF({p})")


@dataclass(frozen=True)
class GF:
    q: int
    add: np.ndarray  # int32[q, q]
    mul: np.ndarray  # int32[q, q]
    neg: np.ndarray  # int32[q]
    xi: int  # a primitive element

    def sub(self, a: int, b: int) -> int:
        return int(self.add[a, self.neg[b]])

    def power(self, x: int, k: int) -> int:
        r = 1
        for _ in range(k):
            r = int(self.mul[r, x])
        return r


def field(q: int) -> GF:
    pe = prime_power(q)
    if pe is None:
        raise ValueError(f"{q} is not a prime power")
    p, e = pe
    if e == 1:
        idx = np.arange(q)
        add = ((idx[:, None] + idx[None, :]) % q).astype(np.int32)
        mul = ((idx[:, None] * idx[None, :]) % q).astype(np.int32)
    else:
        mod = _irreducible(p, e)
        digs = [_digits(x, p, e) for x in range(q)]
        add = np.array([[_number([(u + v) % p for u, v in zip(digs[a], digs[b])], p) for b in range(q)]
                        for a in range(q)], dtype=np.int32)
        mul = np.array([[_number(_poly_mulmod(digs[a], digs[b], mod, p), p) for b in range(q)]
                        for a in range(q)], dtype=np.int32)
    neg = np.argmin(add, axis=1).astype(np.int32)  # add[a, neg[a]] == 0
    xi = 0
    for cand in range(2, q) if q > 2 else [1]:
        x, order = cand, 1
        while x != 1:
            x = int(mul[x, cand])
            order += 1
        if order == q - 1:
            xi = cand
            break
    if q == 2:
        xi = 1
    return GF(q=q, add=add, mul=mul, neg=neg, xi=xi)
