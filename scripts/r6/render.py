#!/usr/bin/env python3
"""r6: an independent ray-caster for overhead photos of a tiddlywinks mat.

World frame = mat frame: mm, origin at the mat centre on the felt surface, x along the 6 ft side,
y along the 3 ft side, z up (right-handed seen from above).  See README.md.
"""
import argparse, json, math, os, sys, time
import numpy as np
import cv2
from PIL import Image

MAT_X, MAT_Y = 914.4, 457.2            # half sizes
BASE_S = 107.95                        # baseline crosses the diagonal this far in from the corner
DIAG = np.array([1828.8, 914.4]) / math.hypot(1828.8, 914.4)
POT_H, POT_RT, POT_RB, POT_W = 38.0, 24.0, 19.0, 1.5
COLOURS = ['blue', 'green', 'red', 'yellow']
# corners in contract order (-X,+Y), (+X,+Y), (+X,-Y), (-X,-Y): clockwise seen from above
CORNERS = [(-1, 1), (1, 1), (1, -1), (-1, -1)]


def srgb2lin(c):
    c = np.asarray(c, np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lin2srgb(x):
    x = np.clip(x, 0, 1)
    return np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)


def jitter_rgb(rng, rgb, dh=0.03, ds=0.12, dv=0.15):
    hsv = cv2.cvtColor(np.uint8([[rgb]]), cv2.COLOR_RGB2HSV_FULL)[0, 0].astype(float)
    hsv[0] = (hsv[0] + rng.normal(0, dh * 255)) % 256
    hsv[1] = np.clip(hsv[1] * (1 + rng.uniform(-ds, ds)), 0, 255)
    hsv[2] = np.clip(hsv[2] * (1 + rng.uniform(-dv, dv)), 0, 255)
    return cv2.cvtColor(np.uint8([[hsv]]), cv2.COLOR_HSV2RGB_FULL)[0, 0].astype(float)

# --------------------------------------------------------------------------------------------
# camera


class Camera:
    def __init__(self, W, H, f, cx, cy, k1, R, C):
        self.W, self.H, self.f, self.cx, self.cy, self.k1 = W, H, f, cx, cy, k1
        self.R = np.asarray(R, float); self.C = np.asarray(C, float)
        r = np.linspace(0, 2.0, 4001); rd = r * (1 + k1 * r * r)
        i = np.argmax(np.diff(rd) <= 0) if np.any(np.diff(rd) <= 0) else len(r) - 1
        self.rd_max = rd[i] if i > 0 else rd[-1]

    def project(self, P):
        P = np.atleast_2d(np.asarray(P, float))
        pc = (P - self.C) @ self.R.T
        xn = pc[:, 0] / pc[:, 2]; yn = pc[:, 1] / pc[:, 2]
        s = 1 + self.k1 * (xn * xn + yn * yn)
        return np.stack([self.f * xn * s + self.cx, self.f * yn * s + self.cy], 1)

    def rays(self, u, v):
        xd = (u - self.cx) / self.f; yd = (v - self.cy) / self.f
        rd = np.sqrt(xd * xd + yd * yd)
        rd = np.minimum(rd, self.rd_max * 0.999)
        rn = rd.copy()
        for _ in range(12):
            g = rn * (1 + self.k1 * rn * rn) - rd
            rn = rn - g / (1 + 3 * self.k1 * rn * rn)
        sc = np.where(rd > 1e-12, rn / np.maximum(rd, 1e-12), 1.0)
        xn = xd * sc; yn = yd * sc
        d = np.stack([xn, yn, np.ones_like(xn)], -1) @ self.R   # cam -> world (R^T applied on right)
        d /= np.linalg.norm(d, axis=-1, keepdims=True)
        return d


def make_camera(rng, W, H):
    for _ in range(2000):
        Hc = rng.uniform(1200, 1900)
        tilt = math.radians(rng.uniform(0, 8))
        yaw = rng.uniform(-180, 180) if rng.random() < 0.5 else rng.choice([0.0, 180.0]) + rng.uniform(-12, 12)
        k1 = -rng.uniform(0, 0.25) if rng.random() < 0.85 else 0.0
        T = np.array([rng.uniform(-80, 80), rng.uniform(-40, 40), 0.0])
        b = rng.uniform(0, 2 * math.pi)
        C = T + np.array([-math.tan(tilt) * Hc * math.cos(b), -math.tan(tilt) * Hc * math.sin(b), Hc])
        fwd = T - C; fwd /= np.linalg.norm(fwd)
        a = np.array([math.cos(math.radians(yaw)), math.sin(math.radians(yaw)), 0.0])
        xc = a - a.dot(fwd) * fwd; xc /= np.linalg.norm(xc)
        yc = np.cross(fwd, xc)
        R = np.stack([xc, yc, fwd])
        cam = Camera(W, H, 1.0, 0.0, 0.0, k1, R, C)
        # mat outline (with a margin for the mat edge) in normalised distorted coords
        t = np.linspace(-1, 1, 41)
        pts = np.concatenate([np.stack([t * MAT_X, np.full_like(t, s * MAT_Y), 0 * t], 1) for s in (-1, 1)] +
                             [np.stack([np.full_like(t, s * MAT_X), t * MAT_Y, 0 * t], 1) for s in (-1, 1)])
        q = cam.project(pts)
        if np.max(np.hypot(q[:, 0], q[:, 1])) > 0.9 * cam.rd_max:
            continue
        bw = q[:, 0].max() - q[:, 0].min(); bh = q[:, 1].max() - q[:, 1].min()
        frac = rng.uniform(0.6, 0.9)
        f = frac * W / bw
        if f * bh > 0.94 * H:
            f = 0.94 * H / bh
        if f * bw / W < 0.6:
            continue
        cx = W / 2 + rng.uniform(-0.01, 0.01) * W; cy = H / 2 + rng.uniform(-0.01, 0.01) * H
        cam = Camera(W, H, f, cx, cy, k1, R, C)
        p = cam.project(pts)
        m = 0.015 * H
        if p[:, 0].min() < m or p[:, 0].max() > W - m or p[:, 1].min() < m or p[:, 1].max() > H - m:
            continue
        # image corners must be inside the lens' valid field
        cr = np.hypot((np.array([0, W]) - cx) / f, (np.array([0, H]) - cy) / f).max()
        if math.hypot(max(cx, W - cx) / f, max(cy, H - cy) / f) > 0.97 * cam.rd_max:
            continue
        cam.meta = dict(height_mm=float(Hc), yaw_deg=float(yaw), tilt_deg=float(math.degrees(tilt)),
                        fill=float(f * bw / W))
        return cam
    raise RuntimeError('no camera')

# --------------------------------------------------------------------------------------------
# winks: a disc of radius a swept by a sphere of radius rr (thickness 2 rr)


class Wink:
    def __init__(self, wid, colour, size, R, T):
        self.id, self.colour, self.size = wid, colour, size
        self.R, self.T = R, T
        self.rr = T / 2; self.a = R - self.rr
        self.c = np.zeros(3); self.set_normal(np.array([0, 0, 1.0]))
        self.state = 'in_play'; self.tilt = 0.0; self.ell = (1.0, 1.0)
        self.support = 'mat'

    def set_normal(self, n):
        n = n / np.linalg.norm(n); self.n = n
        e1 = np.cross([0, 1.0, 0], n) if abs(n[1]) < 0.9 else np.cross([1.0, 0, 0], n)
        e1 /= np.linalg.norm(e1); self.e1 = e1; self.e2 = np.cross(n, e1)
        self.tilt = math.degrees(math.acos(min(1, n[2])))

    def place_flat(self, x, y, z0):
        self.c = np.array([x, y, z0 + self.rr]); self.set_normal(np.array([0, 0, 1.0]))

    def sdf(self, P):
        q = P - self.c
        lx = q @ self.e1 / self.ell[0]; ly = q @ self.e2 / self.ell[1]; lz = q @ self.n
        rho = np.sqrt(lx * lx + ly * ly)
        dr = np.maximum(rho - self.a, 0)
        return (np.sqrt(dr * dr + lz * lz) - self.rr) * 0.97

    def normal(self, P):
        q = P - self.c
        lx = q @ self.e1; ly = q @ self.e2; lz = q @ self.n
        rho = np.sqrt(lx * lx + ly * ly) + 1e-9
        dr = np.maximum(rho - self.a, 0)
        nx = dr * lx / rho; ny = dr * ly / rho; nz = lz
        nn = np.sqrt(nx * nx + ny * ny + nz * nz) + 1e-12
        nl = np.stack([nx / nn, ny / nn, nz / nn], -1)
        return nl[:, :1] * self.e1 + nl[:, 1:2] * self.e2 + nl[:, 2:] * self.n, nl[:, 2]

    def ext(self, u):          # horizontal support distance of the footprint in unit direction u (2d)
        u3 = np.array([u[0], u[1], 0.0])
        return self.a * math.sqrt(max(0.0, 1 - u3.dot(self.n) ** 2)) + self.rr

    def foot(self):
        return self.c[:2].copy()

    def top_centre(self):
        return self.c + self.n * self.rr

    def mid_height(self, xy):   # height of mid-plane at horizontal xy
        d = np.asarray(xy) - self.c[:2]
        return self.c[2] - (d[0] * self.n[0] + d[1] * self.n[1]) / self.n[2]

    def bound(self):
        return self.c, self.R + 0.05


def footprint_margin(w1, w2):
    d = w2.foot() - w1.foot(); L = np.linalg.norm(d)
    if L < 1e-9:
        return w1.R + w2.R
    u = d / L
    return w1.ext(u) + w2.ext(-u) - L


def solve_rest(w, xy, u, others, z0=0.0):
    """Pose for wink w with footprint centre xy, high side towards -u, resting on the plane z0 and
    on the winks in `others`.  Minimises the centre height over tilt."""
    u = np.asarray(u, float) / np.linalg.norm(u)
    th = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    rs = np.array([1.0, 0.75, 0.5, 0.25])
    best = None
    near = [o for o in others if np.linalg.norm(o.foot() - xy) < o.R + w.R + 1]
    for tdeg in np.arange(0, 30.01, 0.25):
        t = math.radians(tdeg)
        n = np.array([math.sin(t) * u[0], math.sin(t) * u[1], math.cos(t)])
        w.set_normal(n)
        zlo = z0 + w.a * math.sin(t) + w.rr
        pts0 = (rs[:, None, None] * w.a * (np.cos(th)[None, :, None] * w.e1 + np.sin(th)[None, :, None] * w.e2)).reshape(-1, 3)
        pts0 = np.concatenate([pts0, np.zeros((1, 3))])

        def ok(cz):
            P = pts0 + np.array([xy[0], xy[1], cz])
            for o in near:
                if np.min(o.sdf(P) / 0.97) < w.rr - 1e-4:
                    return False
            return True
        if ok(zlo):
            cz = zlo
        else:
            lo, hi = zlo, zlo + 12
            if not ok(hi):
                continue
            for _ in range(30):
                mid = (lo + hi) / 2
                if ok(mid):
                    hi = mid
                else:
                    lo = mid
            cz = hi
        if best is None or cz < best[0] - 1e-6:
            best = (cz, tdeg)
    cz, tdeg = best
    t = math.radians(tdeg)
    w.set_normal(np.array([math.sin(t) * u[0], math.sin(t) * u[1], math.cos(t)]))
    w.c = np.array([xy[0], xy[1], cz])
    return w


def place_squop(w, lower, margin, direction, others):
    u = np.array([math.cos(direction), math.sin(direction)])
    d = lower.ext(u) + w.R - margin
    for _ in range(5):
        xy = lower.foot() + u * d
        solve_rest(w, xy, u, others)
        m = footprint_margin(w, lower)
        d += (m - margin)
        if abs(m - margin) < 0.003:
            break
    xy = lower.foot() + u * d
    solve_rest(w, xy, u, others)
    return w

# --------------------------------------------------------------------------------------------
# the pot: a thickened profile curve (surface of revolution)


def pot_rout(z):
    return POT_RB + (POT_RT - POT_RB) * (np.clip(z, 0, POT_H) / POT_H) ** 1.7


class Pot:
    def __init__(self):
        w = POT_W
        zs = np.linspace(w / 2, POT_H - w / 2, 18)
        pts = [(0.0, w / 2)] + [(pot_rout(z) - w / 2, z) for z in zs]
        self.A = np.array(pts[:-1]); self.B = np.array(pts[1:])
        self.c = np.array([0, 0, POT_H / 2])

    def _closest(self, rho, z):
        P = np.stack([rho, z], -1)[:, None, :]
        AB = (self.B - self.A)[None]; AP = P - self.A[None]
        t = np.clip((AP * AB).sum(-1) / (AB * AB).sum(-1), 0, 1)
        Q = self.A[None] + t[..., None] * AB
        d2 = ((P - Q) ** 2).sum(-1)
        k = np.argmin(d2, 1)
        i = np.arange(len(rho))
        return np.sqrt(d2[i, k]), Q[i, k]

    def sdf(self, P):
        rho = np.hypot(P[:, 0], P[:, 1]); z = P[:, 2]
        d, _ = self._closest(rho, z)
        return d - POT_W / 2

    def normal(self, P):
        rho = np.hypot(P[:, 0], P[:, 1]) + 1e-9; z = P[:, 2]
        d, Q = self._closest(rho, z)
        g = np.stack([rho - Q[:, 0], z - Q[:, 1]], -1)
        g /= np.linalg.norm(g, axis=-1, keepdims=True) + 1e-12
        return np.stack([g[:, 0] * P[:, 0] / rho, g[:, 0] * P[:, 1] / rho, g[:, 1]], -1), None

    def bound(self):
        return self.c, math.hypot(POT_RT + 0.5, POT_H / 2 + 0.5)

# --------------------------------------------------------------------------------------------
# procedural textures


def periodic_noise(rng, n, sigma, aniso=1.0, angle=0.0):
    w = rng.standard_normal((n, n))
    fy = np.fft.fftfreq(n)[:, None]; fx = np.fft.fftfreq(n)[None, :]
    ca, sa = math.cos(angle), math.sin(angle)
    fu = fx * ca + fy * sa; fv = -fx * sa + fy * ca
    G = np.exp(-2 * (math.pi * sigma) ** 2 * (fu ** 2 + (fv * aniso) ** 2))
    r = np.real(np.fft.ifft2(np.fft.fft2(w) * G))
    return (r - r.mean()) / (r.std() + 1e-12)


def lowfreq(rng, shape, cell):
    h, w = shape
    g = rng.standard_normal((max(2, int(h / cell) + 3), max(2, int(w / cell) + 3)))
    r = cv2.resize(g, (w, h), interpolation=cv2.INTER_CUBIC)
    return r / (r.std() + 1e-9)


class Felt:
    def __init__(self, rng, rgb):
        self.alb = srgb2lin(rgb)
        self.res_lo = 0.25                      # px per mm for mottling
        sh = (int(2 * MAT_Y * self.res_lo) + 8, int(2 * MAT_X * self.res_lo) + 8)
        m = (rng.uniform(0.02, 0.06) * lowfreq(rng, sh, 40 * self.res_lo) +
             rng.uniform(0.02, 0.05) * lowfreq(rng, sh, 12 * self.res_lo) +
             rng.uniform(0.01, 0.03) * lowfreq(rng, sh, 3))
        # wear: lighter or darker area around the pot
        yy, xx = np.mgrid[0:sh[0], 0:sh[1]]
        rr = np.hypot((xx - sh[1] / 2) / self.res_lo, (yy - sh[0] / 2) / self.res_lo)
        m += rng.uniform(-0.05, 0.05) * np.exp(-(rr / rng.uniform(150, 400)) ** 2)
        self.mottle = (1 + m).astype(np.float32)
        # fibre: tileable, 4 px/mm, 128 mm period, plus a 2nd tile at a different period
        self.res_hi = 4.0
        n = 512
        fib = sum(periodic_noise(rng, n, 0.6, aniso=rng.uniform(4, 10), angle=rng.uniform(0, math.pi)) for _ in range(3))
        fib = fib / fib.std() + 0.6 * periodic_noise(rng, n, 1.2)
        fib2 = periodic_noise(rng, 256, 1.5)
        self.fib_amp = rng.uniform(0.04, 0.10)
        self.fib = (fib / fib.std()).astype(np.float32)
        self.fib2 = fib2.astype(np.float32)
        self.chroma = rng.uniform(0.0, 0.03, 3)      # slight colour mottling per channel
        self.cm = [lowfreq(rng, sh, 25 * self.res_lo).astype(np.float32) for _ in range(3)]

    def sample(self, x, y):
        mx = ((x + MAT_X) * self.res_lo + 4).astype(np.float32); my = ((MAT_Y - y) * self.res_lo + 4).astype(np.float32)
        mot = cv2.remap(self.mottle, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
        fx = ((x * self.res_hi) % 512).astype(np.float32); fy = ((-y * self.res_hi) % 512).astype(np.float32)
        fb = cv2.remap(self.fib, fx, fy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
        gx = ((x * 1.37 + 40) % 256).astype(np.float32); gy = ((y * 1.37 + 11) % 256).astype(np.float32)
        fb2 = cv2.remap(self.fib2, gx, gy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
        tex = mot * (1 + self.fib_amp * (0.8 * fb + 0.5 * fb2))
        out = np.empty(x.shape + (3,), np.float32)
        for k in range(3):
            cmk = cv2.remap(self.cm[k], mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
            out[..., k] = self.alb[k] * tex * (1 + self.chroma[k] * cmk)
        return out


class Table:
    KINDS = ['wood', 'wood', 'checked', 'striped', 'white', 'dark', 'cloth']

    def __init__(self, rng):
        self.kind = rng.choice(self.KINDS)
        self.ang = rng.uniform(0, math.pi)
        k = self.kind
        if k == 'wood':
            base = [(170, 125, 80), (120, 80, 50), (200, 165, 120), (90, 60, 40), (150, 100, 60)][rng.integers(5)]
            self.c1 = srgb2lin(jitter_rgb(rng, base)); self.c2 = self.c1 * rng.uniform(0.6, 0.8)
            self.period = rng.uniform(6, 20)
            self.desc = 'wood'
        elif k in ('checked', 'striped'):
            pal = [(200, 40, 40), (40, 60, 150), (30, 110, 60), (230, 230, 225), (40, 40, 40), (200, 170, 60), (120, 60, 120)]
            i, j = rng.choice(len(pal), 2, replace=False)
            self.c1 = srgb2lin(jitter_rgb(rng, pal[i])); self.c2 = srgb2lin(jitter_rgb(rng, pal[j]))
            self.period = rng.uniform(20, 45)
            if k == 'checked' and rng.random() < 0.7:          # gingham: a colour on white
                self.c2 = srgb2lin(jitter_rgb(rng, (236, 234, 226), dv=0.04))
            self.desc = f'{k} cloth'
        elif k == 'white':
            self.c1 = srgb2lin(jitter_rgb(rng, (232, 232, 226), dv=0.05)); self.c2 = self.c1; self.period = 50
            self.desc = 'white'
        elif k == 'dark':
            self.c1 = srgb2lin(jitter_rgb(rng, (35, 35, 40))); self.c2 = self.c1 * 0.8; self.period = 50
            self.desc = 'dark'
        else:
            self.c1 = srgb2lin(jitter_rgb(rng, [(140, 40, 50), (60, 80, 60), (90, 90, 110), (180, 160, 130)][rng.integers(4)]))
            self.c2 = self.c1 * 0.9; self.period = 50
            self.desc = 'plain cloth'
        self.res = 0.5
        self.ext = 4000
        n = int(2 * self.ext * self.res)
        self.noise = lowfreq(rng, (n, n), 30).astype(np.float32)
        self.noise2 = lowfreq(rng, (n, n), 3).astype(np.float32)

    def sample(self, x, y):
        ca, sa = math.cos(self.ang), math.sin(self.ang)
        u = x * ca + y * sa; v = -x * sa + y * ca
        mx = np.clip((x + self.ext) * self.res, 0, 2 * self.ext * self.res - 1).astype(np.float32)
        my = np.clip((y + self.ext) * self.res, 0, 2 * self.ext * self.res - 1).astype(np.float32)
        n1 = cv2.remap(self.noise, mx, my, cv2.INTER_LINEAR); n2 = cv2.remap(self.noise2, mx, my, cv2.INTER_LINEAR)
        k = self.kind
        if k == 'wood':
            g = 0.5 + 0.5 * np.sin(2 * math.pi * (v / self.period + 0.25 * n1 + 0.03 * n2))
            g = g ** 3
            m = g[..., None]
            out = self.c1 * (1 - m) + self.c2 * m
            out = out * (1 + 0.04 * n2[..., None])
        elif k in ('checked', 'striped'):
            s1 = (0.5 + 0.5 * np.tanh(10 * np.sin(2 * math.pi * u / self.period)))
            if k == 'checked':
                s2 = (0.5 + 0.5 * np.tanh(10 * np.sin(2 * math.pi * v / self.period)))
                m = (0.5 * s1 + 0.5 * s2)[..., None]
            else:
                m = s1[..., None]
            out = self.c1 * (1 - m) + self.c2 * m
            out = out * (1 + 0.05 * n2[..., None])
        else:
            out = self.c1 * (1 + 0.03 * n1[..., None] + 0.03 * n2[..., None])
        return out.astype(np.float32)

# --------------------------------------------------------------------------------------------
# scene generation


def field_ok(x, y, R, pad=3.0):
    """footprint (radius R) wholly inside the field of play (mat minus corner triangles)"""
    if abs(x) > MAT_X - R - pad or abs(y) > MAT_Y - R - pad:
        return False
    for sx, sy in CORNERS:
        dv = np.array([-sx * DIAG[0], -sy * DIAG[1]])
        s = (x - sx * MAT_X) * dv[0] + (y - sy * MAT_Y) * dv[1]
        if s < BASE_S + R + pad:
            return False
    return True


def corner_ok(x, y, R, corner, pad=2.0):
    sx, sy = corner
    if abs(x) > MAT_X - R - pad or abs(y) > MAT_Y - R - pad:
        return False
    dv = np.array([-sx * DIAG[0], -sy * DIAG[1]])
    s = (x - sx * MAT_X) * dv[0] + (y - sy * MAT_Y) * dv[1]
    return s <= BASE_S - R - pad


WINK_RGB = {
    'blue': [(25, 60, 170), (20, 40, 125), (40, 95, 205), (30, 55, 150), (15, 70, 160)],
    'green': [(20, 135, 60), (10, 100, 45), (60, 165, 60), (0, 120, 85), (40, 150, 40)],
    'red': [(195, 25, 30), (160, 20, 35), (215, 55, 40), (175, 12, 22), (200, 35, 60)],
    'yellow': [(238, 200, 30), (245, 215, 60), (232, 180, 20), (250, 228, 95), (240, 190, 50)],
}
FELT_RGB = {
    'green': (45, 115, 62), 'dark green': (25, 72, 42), 'grey': (122, 122, 118), 'blue-grey': (88, 104, 122),
    'tan': (182, 160, 118), 'beige': (205, 190, 155), 'brown': (112, 80, 56), 'dark red': (112, 30, 36),
    'black': (32, 32, 34), 'blue': (40, 62, 112), 'light grey': (170, 170, 165), 'olive': (95, 100, 55),
}


def gen_scene(rng, kind):
    notes = []
    winks = []
    start = int(rng.integers(4))                     # corner index holding blue; clockwise b g r y
    corner_of = {c: CORNERS[(start + i) % 4] for i, c in enumerate(COLOURS)}
    big = rng.uniform(21.1, 22.0); small = rng.uniform(15.0, 16.0) if rng.random() < 0.2 else rng.uniform(15.5, 16.1)
    T = rng.uniform(1.5, 1.8)
    n = 0
    for col in COLOURS:
        for s in ['large'] * 2 + ['small'] * 4:
            n += 1
            D = (big if s == 'large' else small) + rng.uniform(-0.15, 0.15)
            w = Wink(f'w{n}', col, s, D / 2, T + rng.uniform(-0.05, 0.05))
            e = rng.uniform(0, 0.012)
            w.ell = (1 + e / 2, 1 - e / 2)
            winks.append(w)
    # states
    states = {}
    for col in COLOURS:
        ws = [w for w in winks if w.colour == col]
        rng.shuffle(ws)
        if kind == 'start':
            nu, npot, noff = 6, 0, 0
        elif kind == 'potout':
            nu, npot, noff = 0, 6, 0
        else:
            nu = int(rng.choice([0, 0, 1, 2, 3, 4], p=[.3, .2, .2, .15, .1, .05])) if kind != 'late' else int(rng.choice([0, 1], p=[.8, .2]))
            npot = int(rng.choice([0, 1, 2, 3], p=[.4, .3, .2, .1])) if kind != 'late' else int(rng.integers(0, 5))
            noff = int(rng.random() < 0.1)
        for i, w in enumerate(ws):
            w.state = 'unplayed' if i < nu else 'potted' if i < nu + npot else 'off' if i < nu + npot + noff else 'in_play'
    if kind == 'potout':
        # only one or two colours potted out; others midgame
        out = list(rng.choice(COLOURS, int(rng.integers(1, 3)), replace=False))
        notes.append('pot-out: ' + ','.join(out))
        for col in COLOURS:
            if col in out:
                continue
            ws = [w for w in winks if w.colour == col]
            npot = int(rng.integers(0, 4))
            for i, w in enumerate(ws):
                w.state = 'potted' if i < npot else 'in_play'
    placed = []
    # unplayed, in their own corner
    for col in COLOURS:
        for w in [w for w in winks if w.colour == col and w.state == 'unplayed']:
            cx, cy = corner_of[col]
            for _ in range(5000):
                x = cx * (MAT_X - rng.uniform(0, 240)); y = cy * (MAT_Y - rng.uniform(0, 240))
                if corner_ok(x, y, w.R, (cx, cy)) and all(np.hypot(x - o.c[0], y - o.c[1]) > w.R + o.R + 1.5 for o in placed):
                    w.place_flat(x, y, 0.0); placed.append(w); break
            else:
                w.state = 'in_play'
    # potted: stacked flat inside the pot
    potted = [w for w in winks if w.state == 'potted']
    rng.shuffle(potted)
    inpot = []
    for w in potted:
        rmax = max(0.0, pot_rout(POT_W) - POT_W - w.R - 0.3)
        for _ in range(50):
            r = rng.uniform(0, 1) ** 0.5 * rmax; a = rng.uniform(0, 2 * math.pi)
            x, y = r * math.cos(a), r * math.sin(a)
            z = POT_W
            for o in inpot:
                if np.hypot(x - o.c[0], y - o.c[1]) < w.R + o.R:
                    z = max(z, o.c[2] + o.rr)
            rmax2 = pot_rout(z + w.T) - POT_W - w.R - 0.3
            if r <= rmax2:
                break
        w.place_flat(x, y, z); inpot.append(w)
    # off: on the table beyond the mat's edge
    mat_h = rng.uniform(1.5, 4.0)
    for w in [w for w in winks if w.state == 'off']:
        side = rng.integers(4)
        dist = rng.uniform(w.R + 3, 120)
        if side < 2:
            x = rng.uniform(-MAT_X + 50, MAT_X - 50); y = (1 if side == 0 else -1) * (MAT_Y + dist)
        else:
            y = rng.uniform(-MAT_Y + 30, MAT_Y - 30); x = (1 if side == 2 else -1) * (MAT_X + dist)
        w.place_flat(x, y, -mat_h); w.support = 'table'
    # in play
    inplay = [w for w in winks if w.state == 'in_play']
    rng.shuffle(inplay)
    base_ws = []

    def random_spot(R):
        for _ in range(4000):
            u = rng.random()
            if u < 0.55:
                r = rng.uniform(POT_RT + R + 1, 260); a = rng.uniform(0, 2 * math.pi)
                x, y = r * math.cos(a) * 1.3, r * math.sin(a) * 0.8
            elif u < 0.85:
                r = rng.uniform(150, 650); a = rng.uniform(0, 2 * math.pi)
                x, y = r * math.cos(a), r * math.sin(a) * 0.6
            else:
                x, y = rng.uniform(-MAT_X, MAT_X), rng.uniform(-MAT_Y, MAT_Y)
            if not field_ok(x, y, R, pad=4):
                continue
            if math.hypot(x, y) < POT_RT + R + 0.5:
                continue
            if any(np.hypot(x - o.c[0], y - o.c[1]) < w_r + o.R + 4 for o in placed if o.state in ('in_play', 'off', 'unplayed') for w_r in [R]):
                continue
            return x, y
        return None

    if kind == 'start':
        inplay = []
    nsq = {'midgame': rng.integers(1, 6), 'late': rng.integers(4, 9), 'nearmiss': rng.integers(1, 4),
           'potout': rng.integers(0, 4), 'start': 0}[kind]
    nclose = {'midgame': rng.integers(1, 4), 'late': rng.integers(1, 4), 'nearmiss': rng.integers(5, 10),
              'potout': rng.integers(0, 3), 'start': 0}[kind]
    nbase = max(1, len(inplay) - nsq) if inplay else 0
    bases = inplay[:nbase]; uppers = inplay[nbase:]
    # some pot-adjacent winks
    for w in bases:
        if rng.random() < 0.06:
            a = rng.uniform(0, 2 * math.pi); r = POT_RB + w.R + rng.uniform(0.5, 3)
            x, y = r * math.cos(a), r * math.sin(a)
            if all(np.hypot(x - o.c[0], y - o.c[1]) > w.R + o.R + 4 for o in placed if o.state != 'potted'):
                w.place_flat(x, y, 0); placed.append(w); base_ws.append(w); continue
        # close pair?
        if nclose > 0 and base_ws and rng.random() < 0.7:
            o = base_ws[rng.integers(len(base_ws))]
            gap = rng.uniform(0.1, 2.0) if rng.random() < 0.8 else rng.uniform(2.0, 3.0)
            ok = False
            for _ in range(60):
                a = rng.uniform(0, 2 * math.pi); d = o.R + w.R + gap
                x, y = o.c[0] + d * math.cos(a), o.c[1] + d * math.sin(a)
                if not field_ok(x, y, w.R, pad=4) or math.hypot(x, y) < POT_RT + w.R + 0.5:
                    continue
                if any(np.hypot(x - p.c[0], y - p.c[1]) < w.R + p.R + 4 for p in placed if p is not o and p.state != 'potted'):
                    continue
                ok = True; break
            if ok:
                w.place_flat(x, y, 0); placed.append(w); base_ws.append(w); nclose -= 1
                continue
        sp = random_spot(w.R)
        if sp is None:
            w.state = 'potted'; w.place_flat(0, 0, 60); continue
        w.place_flat(sp[0], sp[1], 0); placed.append(w); base_ws.append(w)
    # squops
    sq_ws = []
    for w in uppers:
        done = False
        for _ in range(40):
            cands = base_ws + sq_ws if rng.random() < 0.35 else base_ws
            if not cands:
                break
            lower = cands[rng.integers(len(cands))]
            r = rng.random()
            margin = rng.uniform(0.3, 1.0) if r < 0.25 else rng.uniform(1, 2) if r < 0.45 else rng.uniform(2, 4) if r < 0.7 else rng.uniform(4, 6)
            if kind == 'nearmiss' and rng.random() < 0.5:
                margin = rng.uniform(0.2, 1.2)
            direction = rng.uniform(0, 2 * math.pi)
            others = [o for o in placed if o.state in ('in_play', 'off')]
            place_squop(w, lower, margin, direction, others)
            x, y = w.c[:2]
            if not field_ok(x, y, w.R, pad=4) or math.hypot(x, y) < POT_RT + w.R + 0.5:
                continue
            # no unintended overlaps with winks it does not rest on, except rarely
            bad = False
            for o in placed:
                if o is lower or o.state == 'potted':
                    continue
                if o.state == 'unplayed' and np.hypot(x - o.c[0], y - o.c[1]) < w.R + o.R + 4:
                    bad = True; break
                m = footprint_margin(w, o)
                if m > -0.3 and (rng.random() < 0.8 or m < 0.3 or m > 6.0):
                    bad = True; break
            if bad:
                continue
            placed.append(w); sq_ws.append(w); done = True
            break
        if not done:
            sp = random_spot(w.R)
            if sp is None:
                w.state = 'potted'; continue
            w.place_flat(sp[0], sp[1], 0); placed.append(w); base_ws.append(w)
    # re-pot winks that lost their spot
    for w in winks:
        if w.state == 'potted' and w not in inpot:
            rmax = max(0.0, pot_rout(POT_W) - POT_W - w.R - 0.3)
            z = POT_W + max([o.c[2] + o.rr - POT_W for o in inpot] + [0])
            w.place_flat(rng.uniform(-1, 1) * rmax * 0.5, rng.uniform(-1, 1) * rmax * 0.5, z); inpot.append(w)
    return winks, dict(corner_of=corner_of, mat_h=mat_h, notes=notes)


def truth_relations(winks):
    act = [w for w in winks if w.state not in ('potted',) and w.support != 'table']
    squops, close = [], []
    for i in range(len(act)):
        for j in range(i + 1, len(act)):
            a, b = act[i], act[j]
            if np.linalg.norm(a.foot() - b.foot()) > a.R + b.R + 4:
                continue
            m = footprint_margin(a, b)
            if m > 0:
                d = b.foot() - a.foot(); u = d / (np.linalg.norm(d) + 1e-12)
                q = a.foot() + u * (a.ext(u) - m / 2)
                if a.mid_height(q) > b.mid_height(q):
                    squops.append((a, b, m))
                else:
                    squops.append((b, a, m))
            elif m > -3:
                close.append((a, b, m))
    level = {w.id: 0 for w in act}
    for _ in range(6):
        for up, lo, m in squops:
            level[up.id] = max(level[up.id], level[lo.id] + 1)
    return squops, close, level

# --------------------------------------------------------------------------------------------
# rendering


class Lights:
    def __init__(self, rng):
        n = int(rng.choice([1, 2, 2, 3]))
        self.pos = []; self.power = []; self.radius = []; self.col = []
        for _ in range(n):
            self.pos.append(np.array([rng.uniform(-1300, 1300), rng.uniform(-900, 900), rng.uniform(1300, 2600)]))
            self.power.append(rng.uniform(0.5, 1.0)); self.radius.append(rng.uniform(30, 350))
            ct = rng.uniform(-0.08, 0.08)
            self.col.append(np.array([1 + ct, 1.0, 1 - ct]))
        s = sum(self.power); self.power = [p / s for p in self.power]
        self.amb = rng.uniform(0.25, 0.9)
        self.amb_col = np.array([1, 1, 1.0]) + rng.uniform(-0.05, 0.05, 3)
        self.D0 = 2000.0

    def desc(self):
        return [dict(pos_mm=[round(float(v), 1) for v in p], power=round(float(w), 3), radius_mm=round(float(r), 1))
                for p, w, r in zip(self.pos, self.power, self.radius)] + [dict(ambient=round(float(self.amb), 3))]

    def irr(self, P, N, k):
        L = self.pos[k][None] - P
        d = np.linalg.norm(L, axis=-1); l = L / d[:, None]
        cos = np.maximum((l * N).sum(-1), 0)
        return self.power[k] * cos * (self.D0 / d) ** 2, l, d


def shadow_vis(P, l, dist, lamp_r, occ, self_id, pot):
    """visibility (0..1) of a lamp from points P along unit directions l"""
    vis = np.ones(len(P))
    for w in occ:
        dn = l @ w.n
        s = ((w.c - P) @ w.n) / np.where(np.abs(dn) < 1e-6, 1e-6, dn)
        Q = P + s[:, None] * l
        rho = np.linalg.norm(Q - w.c, axis=-1)
        pen = s * lamp_r / dist + 0.12
        cov = np.clip(0.5 + (w.R - rho) / pen, 0, 1) * (s > 0.05)
        if self_id is not None:
            cov = np.where(self_id == id(w), 0, cov)
        vis *= 1 - cov
    if pot is not None:
        rho_p = np.hypot(P[:, 0], P[:, 1])
        inside = (rho_p < pot_rout(P[:, 2]) - POT_W * 0.5) & (P[:, 2] < POT_H)
        cov = np.zeros(len(P))
        lz = np.maximum(l[:, 2], 1e-3)
        for z in np.linspace(0.5, POT_H - 0.2, 26):
            s = (z - P[:, 2]) / lz
            valid = s > 0.05
            X = P[:, 0] + s * l[:, 0]; Y = P[:, 1] + s * l[:, 1]
            rr = np.hypot(X, Y)
            pen = s * lamp_r / dist + 0.2
            c_out = np.clip(0.5 + (pot_rout(z) - rr) / pen, 0, 1)
            c_in = np.clip(0.5 + (rr - (pot_rout(z) - POT_W)) / pen, 0, 1)
            c = np.where(inside, c_in, c_out) * valid
            cov = np.maximum(cov, c)
        vis *= 1 - cov
    return vis


def ao_factor(P, occ, self_id, pot):
    ao = np.ones(len(P))
    for w in occ:
        f = w.foot()
        dxy = P[:, :2] - f
        r = np.linalg.norm(dxy, axis=-1)
        d = np.maximum(r - w.R, 0)
        zb = w.c[2] - (dxy @ w.n[:2]) / w.n[2] - w.rr / w.n[2]
        gap = np.maximum(zb - P[:, 2], 0)
        above = (w.c[2] > P[:, 2] + 0.05)
        a = 0.5 * np.exp(-(d + 0.6 * gap) / 1.1) * above
        if self_id is not None:
            a = np.where(self_id == id(w), 0, a)
        ao *= 1 - a
    if pot is not None:
        rho = np.hypot(P[:, 0], P[:, 1])
        inside = (rho < pot_rout(P[:, 2]) - POT_W * 0.5) & (P[:, 2] < POT_H)
        depth = np.clip(POT_H - P[:, 2], 0, POT_H)
        ri = pot_rout(P[:, 2]) - POT_W
        sky = ri ** 2 / (ri ** 2 + depth ** 2)
        ao_out = 1 - 0.45 * np.exp(-np.maximum(rho - POT_RB, 0) / 5.0) * (P[:, 2] < 2)
        ao *= np.where(inside, 0.25 + 0.75 * sky, ao_out)
    return ao


def sphere_trace(obj, O, D, tmax):
    c, rb = obj.bound()
    oc = O - c
    b = (oc * D).sum(-1); cc = (oc * oc).sum(-1) - rb * rb
    disc = b * b - cc
    t_hit = np.full(len(O), np.inf)
    m = disc > 0
    idx = np.nonzero(m)[0]
    if len(idx) == 0:
        return t_hit
    sq = np.sqrt(disc[idx])
    t0 = np.maximum(-b[idx] - sq, 0); t1 = np.minimum(-b[idx] + sq, tmax[idx])
    t = t0.copy()
    act = np.arange(len(idx))
    for it in range(80):
        if len(act) == 0:
            break
        P = O[idx[act]] + t[act, None] * D[idx[act]]
        h = obj.sdf(P)
        hit = h < 0.004
        t_hit[idx[act[hit]]] = t[act[hit]]
        t[act] += np.maximum(h, 0.002)
        keep = (~hit) & (t[act] < t1[act])
        act = act[keep]
    return t_hit


def render(cam, winks, pot, felt, table, lights, baseline, mat_h, rng, ss):
    W, H = cam.W, cam.H
    # ---------------- background at 1 sample per pixel
    vv, uu = np.mgrid[0:H, 0:W].astype(np.float64)
    D = cam.rays(uu.ravel(), vv.ravel()); del uu, vv
    C = cam.C
    t0 = (0 - C[2]) / D[:, 2]
    X0 = C[0] + t0 * D[:, 0]; Y0 = C[1] + t0 * D[:, 1]
    t1 = (-mat_h - C[2]) / D[:, 2]
    X1 = C[0] + t1 * D[:, 0]; Y1 = C[1] + t1 * D[:, 1]
    mmpp = t0 / cam.f * 1.2
    sd_mat = np.minimum(MAT_X - np.abs(X0), MAT_Y - np.abs(Y0))
    cov_mat = np.clip(0.5 + sd_mat / mmpp, 0, 1)
    inside1 = (np.abs(X1) < MAT_X) & (np.abs(Y1) < MAT_Y)      # table point hidden by the mat's side
    alb_mat = felt.sample(X0.reshape(H, W), Y0.reshape(H, W)).reshape(-1, 3)
    # baselines
    if baseline['present']:
        bw = baseline['width']; bc = baseline['alb']
        bl = np.zeros(len(X0), np.float32)
        for sx, sy in CORNERS:
            dv = (-sx * DIAG[0], -sy * DIAG[1])
            s = (X0 - sx * MAT_X) * dv[0] + (Y0 - sy * MAT_Y) * dv[1] - BASE_S
            if baseline['kind'] == 'painted':
                s = s + baseline['wobble'] * np.sin(0.11 * (X0 * dv[1] - Y0 * dv[0]) + sx) + baseline['wobble'] * 0.5 * np.sin(0.53 * (X0 * dv[1] - Y0 * dv[0]))
            c = np.clip(0.5 + (bw / 2 - np.abs(s)) / mmpp, 0, 1)
            bl = np.maximum(bl, c)
        bl *= baseline['opacity']
        alb_mat = alb_mat * (1 - bl[:, None]) + (bc[None] * (1 + 0.3 * (alb_mat / felt.alb[None] - 1))) * bl[:, None]
    side = felt.alb * 0.55
    alb_tab = table.sample(X1.reshape(H, W), Y1.reshape(H, W)).reshape(-1, 3)
    alb_low = np.where(inside1[:, None], side[None], alb_tab)
    alb = alb_mat * cov_mat[:, None] + alb_low * (1 - cov_mat[:, None])
    Pg = np.stack([np.where(cov_mat > 0.5, X0, X1), np.where(cov_mat > 0.5, Y0, Y1), np.where(cov_mat > 0.5, 0.0, -mat_h)], -1)
    del X0, Y0, X1, Y1, t0, t1, alb_mat, alb_tab, alb_low, sd_mat
    Nup = np.array([0, 0, 1.0])
    def ground_shade(P, A, occ, pot_):
        E = np.zeros((len(P), 3))
        ao = ao_factor(P, occ, None, pot_) if (occ or pot_ is not None) else np.ones(len(P))
        E += lights.amb * lights.amb_col * ao[:, None]
        for k in range(len(lights.pos)):
            e, l, d = lights.irr(P, Nup[None], k)
            if occ or pot_ is not None:
                e = e * shadow_vis(P, l, d, lights.radius[k], occ, None, pot_)
            E += e[:, None] * lights.col[k]
        return A * E
    e_typ = float(np.mean(ground_shade(np.array([[x, y, 0.0] for x in (-600, 0, 600) for y in (-300, 0, 300)]), np.ones((9, 3)), [], None)))
    img = np.empty((H * W, 3), np.float32)
    CH = 1 << 20
    for i in range(0, H * W, CH):
        img[i:i + CH] = ground_shade(Pg[i:i + CH], alb[i:i + CH], [], None)
    # ---------------- objects
    objs = [w for w in winks] + [pot]
    boxes = []
    for o in objs:
        c, rb = o.bound()
        if isinstance(o, Pot):
            pts = [np.array([x, y, z]) for x in (-POT_RT, POT_RT) for y in (-POT_RT, POT_RT) for z in (0, POT_H)]
            sh = 70.0
        else:
            pts = [c + np.array([dx, dy, dz]) for dx in (-rb, rb) for dy in (-rb, rb) for dz in (-rb * 0.3, rb * 0.3)]
            sh = 6.0
        pts = np.array(pts)
        q = cam.project(pts)
        ext_pts = np.array([[c[0] + sh * math.cos(a), c[1] + sh * math.sin(a), min(c[2], 0)] for a in np.linspace(0, 2 * math.pi, 12)])
        q2 = cam.project(ext_pts)
        qq = np.concatenate([q, q2])
        x0, y0 = np.floor(qq.min(0)) - 3; x1, y1 = np.ceil(qq.max(0)) + 3
        boxes.append([x0, y0, x1, y1])
    boxes = np.array(boxes)
    # prune objects far outside
    onscreen = (boxes[:, 2] > -60) & (boxes[:, 0] < W + 60) & (boxes[:, 3] > -60) & (boxes[:, 1] < H + 60)
    # clusters by box overlap
    n = len(objs); parent = list(range(n))
    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]; i = parent[i]
        return i
    for i in range(n):
        for j in range(i + 1, n):
            if onscreen[i] and onscreen[j] and not (boxes[i, 2] < boxes[j, 0] or boxes[j, 2] < boxes[i, 0] or boxes[i, 3] < boxes[j, 1] or boxes[j, 3] < boxes[i, 1]):
                parent[find(i)] = find(j)
    clusters = {}
    for i in range(n):
        if onscreen[i]:
            clusters.setdefault(find(i), []).append(i)
    vis_info = {}
    img = img.reshape(H, W, 3); alb = alb.reshape(H, W, 3); Pg = Pg.reshape(H, W, 3)
    for members in clusters.values():
        bx0 = int(boxes[members, 0].min()); by0 = int(boxes[members, 1].min())
        bx1 = int(boxes[members, 2].max()); by1 = int(boxes[members, 3].max())
        cobjs = [objs[i] for i in members]
        occ = [o for o in cobjs if isinstance(o, Wink)]
        cpot = pot if any(isinstance(o, Pot) for o in cobjs) else None
        # shadows on the ground (1 spp) in the in-image part
        ix0, iy0, ix1, iy1 = max(bx0, 0), max(by0, 0), min(bx1, W - 1), min(by1, H - 1)
        if ix1 >= ix0 and iy1 >= iy0:
            P = Pg[iy0:iy1 + 1, ix0:ix1 + 1].reshape(-1, 3)
            A = alb[iy0:iy1 + 1, ix0:ix1 + 1].reshape(-1, 3)
            img[iy0:iy1 + 1, ix0:ix1 + 1] = ground_shade(P, A, occ, cpot).reshape(iy1 - iy0 + 1, ix1 - ix0 + 1, 3)
        # supersampled object rays over the full (unclipped) box
        ys, xs = np.mgrid[by0:by1 + 1, bx0:bx1 + 1]
        bh, bwid = ys.shape
        offs = (np.arange(ss) + 0.5) / ss - 0.5
        oy, ox = np.meshgrid(offs, offs, indexing='ij')
        U = (xs[:, :, None, None] + ox[None, None]).ravel(); V = (ys[:, :, None, None] + oy[None, None]).ravel()
        Dr = cam.rays(U, V)
        O = np.broadcast_to(cam.C, Dr.shape)
        tmax = (-mat_h - 1 - cam.C[2]) / Dr[:, 2]
        tbest = np.full(len(U), np.inf); ibest = np.full(len(U), -1)
        alone = {}
        for k, o in enumerate(cobjs):
            th = sphere_trace(o, O, Dr, tmax)
            if isinstance(o, Wink):
                hitm = np.isfinite(th)
                topf = np.zeros(len(U), bool)
                if hitm.any():
                    Ph = O[hitm] + th[hitm, None] * Dr[hitm]
                    _, nlz = o.normal(Ph)
                    topf[np.nonzero(hitm)[0][nlz > 0]] = True
                alone[k] = topf
            better = th < tbest
            tbest[better] = th[better]; ibest[better] = k
        # shading of object hits
        col = np.zeros((len(U), 3))
        hit = ibest >= 0
        selfid = np.zeros(len(U), np.int64)
        Nrm = np.zeros((len(U), 3)); Ph = O + np.where(np.isfinite(tbest), tbest, 0)[:, None] * Dr
        albo = np.zeros((len(U), 3)); ks = np.zeros(len(U)); ex = np.ones(len(U))
        nlz_all = np.zeros(len(U))
        for k, o in enumerate(cobjs):
            m = ibest == k
            if not m.any():
                continue
            nrm, nlz = o.normal(Ph[m])
            Nrm[m] = nrm; selfid[m] = id(o)
            if nlz is not None:
                nlz_all[m] = nlz
            albo[m] = o.alb; ks[m] = o.ks; ex[m] = o.gexp
        if hit.any():
            Pm, Nm, Am = Ph[hit], Nrm[hit], albo[hit]
            Vd = -Dr[hit]
            ao = ao_factor(Pm, occ, selfid[hit], cpot)
            E = lights.amb * lights.amb_col[None] * (ao * (0.55 + 0.45 * Nm[:, 2]))[:, None]
            S = np.zeros((len(Pm), 3))
            for kk in range(len(lights.pos)):
                e, l, d = lights.irr(Pm, Nm, kk)
                vis = shadow_vis(Pm, l, d, lights.radius[kk], occ, selfid[hit], cpot)
                E += (e * vis)[:, None] * lights.col[kk]
                hv = l + Vd; hv /= np.linalg.norm(hv, axis=-1, keepdims=True)
                nh = np.maximum((Nm * hv).sum(-1), 0)
                e_un = lights.power[kk] * (lights.D0 / d) ** 2
                # lamp size widens the lobe
                exk = 1.0 / (1.0 / ex[hit] + (lights.radius[kk] / d) ** 2 / 8)
                sp = ks[hit] * e_un * (exk + 2) / 8 * nh ** exk * vis * (((Nm * l).sum(-1)) > 0)
                S += sp[:, None] * lights.col[kk]
            fres = 0.04 + 0.96 * (1 - np.clip((Nm * Vd).sum(-1), 0, 1)) ** 5
            S += (fres * (ks[hit] / 0.04) * lights.amb * ao)[:, None] * lights.amb_col[None]
            col[hit] = Am * E + S
        # background samples take the shaded ground pixel value
        px = np.clip(np.floor(U + 0.5).astype(int), 0, W - 1); py = np.clip(np.floor(V + 0.5).astype(int), 0, H - 1)
        col[~hit] = img[py[~hit], px[~hit]]
        col = col.reshape(bh, bwid, ss * ss, 3).mean(2)
        inimg = (xs >= 0) & (xs < W) & (ys >= 0) & (ys < H)
        img[ys[inimg], xs[inimg]] = col[inimg]
        # visible share and visible-top centroid
        inimg_s = np.repeat(inimg.ravel(), ss * ss)
        for k, o in enumerate(cobjs):
            if not isinstance(o, Wink):
                continue
            tot = alone[k].sum()
            vis = (ibest == k) & (nlz_all > 0) & inimg_s
            nv = vis.sum()
            cen = [float(U[vis].mean()), float(V[vis].mean())] if nv else None
            vis_info[o.id] = (float(nv / tot) if tot else 0.0, cen)
    return img, vis_info, e_typ


def post(rng, img, cam, e_typ):
    H, W = img.shape[:2]
    # exposure: nominal (white paper at the typical mat irradiance -> 0.85), drift, and a limited auto-exposure boost
    nominal = 0.85 / e_typ
    mean_nom = float(np.mean(img)) * nominal
    target = rng.uniform(0.7, 1.15) * float(np.clip((0.18 / max(mean_nom, 1e-4)) ** 0.5, 0.8, 1.8))
    img = img * (nominal * target)
    # vignetting (natural cos^4-like falloff plus lens)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    r2 = (((xx - cam.cx) / cam.f) ** 2 + ((yy - cam.cy) / cam.f) ** 2)
    vstr = rng.uniform(0.0, 1.0)
    vig = (1 / (1 + r2)) ** (2 * vstr)
    img = img * vig[..., None]
    # blur (lens + demosaic)
    sig = rng.uniform(0.4, 1.0) * (W / 1920) ** 0.25
    img = cv2.GaussianBlur(img.astype(np.float32), (0, 0), sig)
    # sensor noise in linear light
    gain = rng.uniform(0.0008, 0.005)
    read = rng.uniform(0.0015, 0.005)
    noise = rng.standard_normal(img.shape).astype(np.float32)
    img = img + noise * np.sqrt(np.maximum(img, 0) * gain + read ** 2)
    lum_noise = rng.standard_normal((H, W)).astype(np.float32) * read * 0.7
    img = img + lum_noise[..., None]
    # white balance error
    wb = 1 + rng.uniform(-0.05, 0.05, 3)
    img = img * wb[None, None]
    # highlight shoulder
    img = np.where(img > 0.8, 0.8 + 0.25 * (1 - np.exp(-(img - 0.8) / 0.25)), img)
    out = lin2srgb(img)
    # mild S-curve / contrast
    c = rng.uniform(0.0, 0.15)
    out = out + c * (out - 0.5) * (1 - np.abs(2 * out - 1))
    return (np.clip(out, 0, 1) * 255 + 0.5).astype(np.uint8), dict(exposure=target, vignetting=vstr, blur_sigma_px=sig,
                                                                     noise_gain=gain, read_noise=read)


KINDS = ['start', 'midgame', 'midgame', 'midgame', 'nearmiss', 'nearmiss', 'potout', 'late', 'late']


def make_frame(args, index, outdir):
    W, H = args.W, args.H
    seed = args.seed * 100003 + index
    rng = np.random.default_rng(seed)
    t_start = time.time()
    name = f'r6_{W}x{H}_s{args.seed}_{index:03d}'
    kind = KINDS[index % len(KINDS)] if index >= 2 else ['start', 'midgame'][index]
    cam = make_camera(rng, W, H)
    felt_name = rng.choice(list(FELT_RGB))
    if rng.random() < 0.25:
        felt_name = rng.choice(['green', 'dark green'])
    felt = Felt(rng, jitter_rgb(rng, FELT_RGB[felt_name], dv=0.12))
    table = Table(rng)
    lights = Lights(rng)
    winks, meta = gen_scene(rng, kind)
    # appearance of winks
    gloss_set = rng.random() < 0.6
    shades = {c: jitter_rgb(rng, WINK_RGB[c][rng.integers(len(WINK_RGB[c]))], dh=0.015, ds=0.08, dv=0.08) for c in COLOURS}
    for w in winks:
        # albedo such that colour plus the ~4% specular veil looks like the chosen shade
        w.alb = np.maximum(srgb2lin(shades[w.colour]) * rng.uniform(0.95, 1.05) - 0.035, 0.003)
        w.glossy = bool(gloss_set and rng.random() < 0.7)
        w.ks = rng.uniform(0.035, 0.06) if w.glossy else rng.uniform(0.02, 0.04)   # Fresnel F0 of plastic
        w.gexp = math.exp(rng.uniform(math.log(300), math.log(3000))) if w.glossy else rng.uniform(8, 25)
    pot = Pot()
    pot_rgb = [(20, 20, 22), (235, 235, 230), (190, 30, 30), (30, 60, 160), (110, 75, 45), (30, 90, 45), (140, 140, 140), (200, 190, 170)]
    pot_choice = int(rng.integers(len(pot_rgb)))
    pot.alb = srgb2lin(jitter_rgb(rng, pot_rgb[pot_choice], dv=0.05)); pot.ks = rng.uniform(0.03, 0.05); pot.gexp = rng.uniform(30, 400)
    bl_cols = {'white': (235, 235, 230), 'yellow': (230, 200, 40), 'black': (25, 25, 25), 'red': (190, 30, 30),
               'blue': (40, 60, 170), 'light grey': (190, 190, 185)}
    felt_lum = float(np.mean(felt.alb))
    while True:
        bname = rng.choice(list(bl_cols))
        if abs(float(np.mean(srgb2lin(bl_cols[bname]))) - felt_lum) > 0.08 or rng.random() < 0.1:
            break
    baseline = dict(present=bool(rng.random() > 0.15), kind=str(rng.choice(['painted', 'taped'])),
                    width=float(rng.uniform(2, 6)), name=str(bname), alb=srgb2lin(bl_cols[bname]).astype(np.float32),
                    opacity=float(rng.uniform(0.75, 1.0)), wobble=float(rng.uniform(0.05, 0.4)))
    ss = args.ss
    img, vis_info, e_typ = render(cam, winks, pot, felt, table, lights, baseline, meta['mat_h'], rng, ss)
    out8, postmeta = post(rng, img, cam, e_typ)
    q = int(rng.integers(75, 96))
    sub = 2 if rng.random() < 0.8 else 1
    Image.fromarray(out8).save(os.path.join(outdir, name + '.jpg'), quality=q, subsampling=sub)
    # ---------------- truth
    squops, close, level = truth_relations(winks)
    corners = cam.project(np.array([[sx * MAT_X, sy * MAT_Y, 0] for sx, sy in CORNERS]))
    wl = []
    for w in winks:
        tc = cam.project(w.top_centre())[0]
        vs, vc = vis_info.get(w.id, (0.0, None))
        st = w.state
        lev = None if st == 'potted' or w.support == 'table' else level.get(w.id, 0)
        wl.append(dict(id=w.id, colour=w.colour, size=w.size, diameter_mm=round(2 * w.R, 3),
                       centre_mm=[round(float(w.c[0]), 3), round(float(w.c[1]), 3)],
                       centre_px=[round(float(tc[0]), 2), round(float(tc[1]), 2)],
                       level=lev, state=st, visible_share=round(vs, 4), tilt_deg=round(float(w.tilt), 2), glossy=w.glossy,
                       visible_centre_px=None if vc is None else [round(vc[0], 2), round(vc[1], 2)],
                       top_height_mm=round(float(w.top_centre()[2]), 3), thickness_mm=round(w.T, 3),
                       support=w.support))
    counts = {c: {s: sum(1 for w in winks if w.colour == c and w.state == s) for s in ['unplayed', 'in_play', 'off', 'potted']} for c in COLOURS}
    pc = cam.project(np.array([[0, 0, 0.0]]))[0]
    pt = cam.project(np.array([[0, 0, POT_H]]))[0]
    truth = dict(format='r5.truth/1', renderer='r6', name=name, seed=int(args.seed), index=int(index), resolution=[W, H],
                 mat_corners_px=[[round(float(a), 2), round(float(b), 2)] for a, b in corners],
                 mat_corners_order='(-X,+Y), (+X,+Y), (+X,-Y), (-X,-Y) as in contract.md',
                 pot_centre_px=[round(float(pc[0]), 2), round(float(pc[1]), 2)],
                 pot_top_centre_px=[round(float(pt[0]), 2), round(float(pt[1]), 2)],
                 camera=dict(f_px=float(cam.f), cx=float(cam.cx), cy=float(cam.cy), k1=float(cam.k1),
                             distortion_model='x_d = x_n (1 + k1 (x_n^2 + y_n^2)), x_n = X_c/Z_c (OpenCV k1 only)',
                             R_world_to_cam=cam.R.round(9).tolist(), centre_mm=cam.C.round(3).tolist(), **cam.meta),
                 scene=dict(kind=kind, felt=str(felt_name), felt_rgb=[int(v) for v in np.round(lin2srgb(felt.alb) * 255)],
                            table=table.desc, baseline={k: v for k, v in baseline.items() if k != 'alb'},
                            pot_colour_rgb=[int(v) for v in np.round(lin2srgb(pot.alb) * 255)], mat_thickness_mm=round(meta['mat_h'], 2),
                            corner_of={c: list(v) for c, v in meta['corner_of'].items()},
                            wink_rgb={c: [int(x) for x in v] for c, v in shades.items()},
                            lamps=lights.desc(), jpeg_quality=q, chroma_subsampling='4:2:0' if sub == 2 else '4:2:2',
                            supersampling=ss, **{k: round(float(v), 4) for k, v in postmeta.items()}),
                 winks=wl,
                 squops=[dict(upper=u.id, lower=l.id, margin_mm=round(float(m), 3)) for u, l, m in squops],
                 close_pairs=[dict(a=a.id, b=b.id, margin_mm=round(float(m), 3)) for a, b, m in close],
                 counts=counts,
                 notes=meta['notes'] + [f'render {time.time() - t_start:.1f}s'])
    with open(os.path.join(outdir, name + '.truth.json'), 'w') as fh:
        json.dump(truth, fh, indent=1)
    return name, time.time() - t_start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    ap.add_argument('--resolution', default='1920x1080')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=10)
    ap.add_argument('--start', type=int, default=0)
    ap.add_argument('--ss', type=int, default=3, help='supersampling per axis for object regions')
    args = ap.parse_args()
    args.W, args.H = map(int, args.resolution.lower().split('x'))
    os.makedirs(args.out, exist_ok=True)
    for i in range(args.start, args.start + args.count):
        name, dt = make_frame(args, i, args.out)
        print(f'{name} {dt:.1f}s', flush=True)


if __name__ == '__main__':
    main()
