#!/usr/bin/env python3
"""Score winkeye position documents against r5.truth/1 files (from the r6 or the older r5 renderer).

python3 score.py DIR [DIR...] --bin target/release/winkeye --results RESULTS_DIR [--reuse] [--jobs 2]
"""
import argparse, glob, json, math, os, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
from scipy.optimize import linear_sum_assignment

COLOURS = ['blue', 'green', 'red', 'yellow']
STATES = ['unplayed', 'in_play', 'off', 'potted']
BINS = [(0.0, 0.5, '<0.5'), (0.5, 1.0, '0.5-1'), (1.0, 2.0, '1-2'), (2.0, 4.0, '2-4'), (4.0, 1e9, '>=4')]
BIG = 1e6


def run_one(binpath, img, out, reuse, timeout):
    if reuse and os.path.exists(out):
        return dict(rc=0, reused=True, secs=None, stderr='')
    t = time.time()
    tmp_err = ''
    try:
        p = subprocess.run([binpath, 'analyze', img, '--json', out], capture_output=True, text=True, timeout=timeout)
        rc = p.returncode; tmp_err = p.stderr[-2000:]
    except subprocess.TimeoutExpired:
        rc = -9; tmp_err = 'timeout'
    return dict(rc=rc, reused=False, secs=round(time.time() - t, 2), stderr=tmp_err)


def wink_radius(w):
    d = w.get('diameter_mm')
    if d is None:
        d = 22.0 if w.get('size') == 'large' else 16.0
    return d / 2


def match(truth_ws, found_ws, flip):
    """returns list of (ti, fi, colour_ok) and total cost"""
    T = [w for w in truth_ws if w.get('centre_mm') is not None]
    F = [w for w in found_ws if w.get('centre_mm') is not None]
    s = -1.0 if flip else 1.0
    tpos = np.array([w['centre_mm'] for w in T], float).reshape(-1, 2)
    fpos = s * np.array([w['centre_mm'] for w in F], float).reshape(-1, 2)
    pairs = []; cost_sum = 0.0
    used_t, used_f = set(), set()

    def assign(ti_list, fi_list, colour_ok):
        nonlocal cost_sum
        if not ti_list or not fi_list:
            return
        C = np.full((len(fi_list), len(ti_list)), BIG)
        for a, fi in enumerate(fi_list):
            for b, ti in enumerate(ti_list):
                d = float(np.hypot(*(fpos[fi] - tpos[ti])))
                if d <= 0.6 * wink_radius(T[ti]):
                    lt, lf = T[ti].get('level'), F[fi].get('level')
                    pen = 1.0 * abs(lt - lf) if (lt is not None and lf is not None) else 0.0
                    C[a, b] = d + pen
        r, c = linear_sum_assignment(C)
        for a, b in zip(r, c):
            if C[a, b] < BIG:
                pairs.append((T[ti_list[b]], F[fi_list[a]], colour_ok, float(np.hypot(*(fpos[fi_list[a]] - tpos[ti_list[b]])))))
                used_t.add(ti_list[b]); used_f.add(fi_list[a]); cost_sum += C[a, b]
    for col in COLOURS:
        assign([i for i, w in enumerate(T) if w['colour'] == col], [i for i, w in enumerate(F) if w.get('colour') == col], True)
    assign([i for i in range(len(T)) if i not in used_t], [i for i in range(len(F)) if i not in used_f], False)
    return pairs, cost_sum


def truth_margin(truth, a, b):
    for p in truth.get('close_pairs', []):
        if {p['a'], p['b']} == {a, b}:
            return p['margin_mm']
    for p in truth.get('squops', []):
        if {p['upper'], p['lower']} == {a, b}:
            return p['margin_mm']
    ws = {w['id']: w for w in truth['winks']}
    A, B = ws[a], ws[b]
    if A.get('centre_mm') is None or B.get('centre_mm') is None:
        return None
    return wink_radius(A) + wink_radius(B) - float(np.hypot(A['centre_mm'][0] - B['centre_mm'][0], A['centre_mm'][1] - B['centre_mm'][1]))


def score_frame(truth, doc):
    tw = truth['winks']
    fw = doc.get('winks', []) or []
    best = None
    for flip in (False, True):
        pairs, cost = match(tw, fw, flip)
        key = (len(pairs), -cost)
        if best is None or key > best[0]:
            best = (key, flip, pairs)
    _, flip, pairs = best
    t2f = {t['id']: (f, cok, d) for t, f, cok, d in pairs}
    f2t = {f['id']: t['id'] for t, f, cok, d in pairs}
    R = dict(half_turn=flip, misses=[], false_finds=[], wrong_colour=[], wrong_size=[], wrong_state=[],
             squop_missed=[], squop_false=[], squop_inverted=[], potted_counts={}, centre_err=[])
    st = dict(recall_n=0, recall_hit=0, found=0, false=0, colour_ok=0, size_ok=0, state_ok=0, matched=0,
              potted_ok=0, potted_n=0, sq_false=0, sq_false_gap=0, sq_inverted=0, sq_reported=0,
              bins={b[2]: [0, 0] for b in BINS}, errs=[], full=0)
    allright = True
    for t in tw:
        if t.get('state') == 'potted' or (t.get('visible_share') or 0) < 0.5:
            continue
        st['recall_n'] += 1
        if t['id'] not in t2f:
            allright = False
            R['misses'].append(dict(id=t['id'], colour=t['colour'], size=t['size'], state=t.get('state'), level=t.get('level'),
                                    visible_share=t.get('visible_share'), centre_px=t.get('centre_px'), centre_mm=t.get('centre_mm')))
            continue
        f, cok, d = t2f[t['id']]
        st['recall_hit'] += 1; st['matched'] += 1
        st['errs'].append(d); R['centre_err'].append([t['id'], round(d, 3)])
        if cok:
            st['colour_ok'] += 1
        else:
            allright = False; R['wrong_colour'].append(dict(id=t['id'], truth=t['colour'], found=f.get('colour'), found_id=f.get('id'), centre_px=t.get('centre_px')))
        if f.get('size') == t['size']:
            st['size_ok'] += 1
        else:
            allright = False; R['wrong_size'].append(dict(id=t['id'], colour=t['colour'], truth=t['size'], found=f.get('size'), diameter_mm=t.get('diameter_mm'),
                                                          found_diameter_mm=f.get('diameter_mm'), visible_share=t.get('visible_share'), centre_px=t.get('centre_px')))
        if f.get('state') == t.get('state'):
            st['state_ok'] += 1
        else:
            allright = False; R['wrong_state'].append(dict(id=t['id'], colour=t['colour'], truth=t.get('state'), found=f.get('state'), centre_px=t.get('centre_px'), centre_mm=t.get('centre_mm')))
    tws = {t['id']: t for t in tw}
    for f in fw:
        if f.get('centre_mm') is None:
            continue
        st['found'] += 1
        if f.get('id') not in f2t:
            st['false'] += 1
            s = -1.0 if flip else 1.0
            fm = np.array(f['centre_mm'], float) * s
            near = min(((float(np.hypot(*(fm - np.array(t['centre_mm'])))), t['id']) for t in tw if t.get('centre_mm') is not None), default=(None, None))
            R['false_finds'].append(dict(found_id=f.get('id'), colour=f.get('colour'), size=f.get('size'), state=f.get('state'), centre_px=f.get('centre_px'),
                                         centre_mm=f.get('centre_mm'), nearest_truth=near[1], nearest_dist_mm=None if near[0] is None else round(near[0], 2)))
    # potted counts
    fcounts = doc.get('counts') or {}
    for col in COLOURS:
        tn = truth.get('counts', {}).get(col, {}).get('potted')
        if tn is None:
            tn = sum(1 for t in tw if t['colour'] == col and t.get('state') == 'potted')
        fn = (fcounts.get(col) or {}).get('potted')
        if fn is None:
            fn = sum(1 for f in fw if f.get('colour') == col and f.get('state') == 'potted')
        st['potted_n'] += 1
        if fn == tn:
            st['potted_ok'] += 1
        R['potted_counts'][col] = [tn, fn]
    # squops
    tsq = {(s['upper'], s['lower']): s['margin_mm'] for s in truth.get('squops', [])}
    fsq = set()
    for s in doc.get('squops', []) or []:
        st['sq_reported'] += 1
        u, l = f2t.get(s.get('upper')), f2t.get(s.get('lower'))
        if u is None or l is None:
            st['sq_false'] += 1
            R['squop_false'].append(dict(found=[s.get('upper'), s.get('lower')], truth=[u, l], reason='unmatched wink', found_margin_mm=s.get('margin_mm')))
            fsq.add(('?' + str(s.get('upper')), '?' + str(s.get('lower'))))
            continue
        fsq.add((u, l))
        if (u, l) in tsq:
            continue
        if (l, u) in tsq:
            st['sq_inverted'] += 1
            R['squop_inverted'].append(dict(found=[s.get('upper'), s.get('lower')], truth_upper=l, truth_lower=u, margin_mm=tsq[(l, u)]))
            continue
        m = truth_margin(truth, u, l)
        st['sq_false'] += 1
        if m is not None and m <= -0.5:
            st['sq_false_gap'] += 1
        R['squop_false'].append(dict(found=[s.get('upper'), s.get('lower')], truth=[u, l], truth_margin_mm=None if m is None else round(m, 3),
                                     found_margin_mm=s.get('margin_mm'), centre_px=[tws[u].get('centre_px'), tws[l].get('centre_px')]))
    for (u, l), m in tsq.items():
        for lo, hi, name in BINS:
            if lo <= m < hi:
                st['bins'][name][1] += 1
                if (u, l) in fsq:
                    st['bins'][name][0] += 1
        if (u, l) not in fsq:
            R['squop_missed'].append(dict(upper=u, lower=l, margin_mm=m, upper_visible=tws[u].get('visible_share'), lower_visible=tws[l].get('visible_share'),
                                          centre_px=[tws[u].get('centre_px'), tws[l].get('centre_px')]))
    if fsq != set(tsq):
        allright = False
    st['full'] = int(allright)
    R['fully_right'] = allright
    return st, R


def pct(a, b):
    return f'{100.0 * a / b:5.1f}% ({a}/{b})' if b else '   -'


def summarise(rows):
    agg = dict(frames=len(rows), failed=0)
    keys = ['recall_n', 'recall_hit', 'found', 'false', 'colour_ok', 'size_ok', 'state_ok', 'matched', 'potted_ok', 'potted_n',
            'sq_false', 'sq_false_gap', 'sq_inverted', 'sq_reported', 'full']
    for k in keys:
        agg[k] = 0
    agg['bins'] = {b[2]: [0, 0] for b in BINS}
    errs = []
    for r in rows:
        if r['st'] is None:
            agg['failed'] += 1
            continue
        for k in keys:
            agg[k] += r['st'][k]
        for b in agg['bins']:
            agg['bins'][b][0] += r['st']['bins'][b][0]; agg['bins'][b][1] += r['st']['bins'][b][1]
        errs += r['st']['errs']
    agg['med'] = float(np.median(errs)) if errs else None
    agg['p95'] = float(np.percentile(errs, 95)) if errs else None
    return agg


def table(groups):
    names = list(groups)
    lines = []
    def row(label, fn):
        lines.append(f'{label:<38}' + ''.join(f'{fn(groups[n]):>22}' for n in names))
    row('', lambda a: '')
    lines[-1] = f'{"metric":<38}' + ''.join(f'{n:>22}' for n in names)
    row('frames', lambda a: str(a['frames']))
    row('frames failed (exit != 0 / no json)', lambda a: str(a['failed']))
    row('recall (vis>=0.5, not potted)', lambda a: pct(a['recall_hit'], a['recall_n']))
    row('precision (found matched)', lambda a: pct(a['found'] - a['false'], a['found']))
    row('false finds', lambda a: str(a['false']))
    row('colour right (of matched)', lambda a: pct(a['colour_ok'], a['matched']))
    row('size right (of matched)', lambda a: pct(a['size_ok'], a['matched']))
    row('state right (of matched)', lambda a: pct(a['state_ok'], a['matched']))
    row('centre err mm median', lambda a: '-' if a['med'] is None else f'{a["med"]:.2f}')
    row('centre err mm p95', lambda a: '-' if a['p95'] is None else f'{a["p95"]:.2f}')
    row('potted count right (colour x frame)', lambda a: pct(a['potted_ok'], a['potted_n']))
    row('squops reported', lambda a: str(a['sq_reported']))
    row('false squops (not a true pair)', lambda a: str(a['sq_false']))
    row('  of which across gap >= 0.5 mm', lambda a: str(a['sq_false_gap']))
    row('squops wrong way up', lambda a: str(a['sq_inverted']))
    for b in BINS:
        row(f'squops right, margin {b[2]} mm', lambda a, b=b: pct(*a['bins'][b[2]]))
    row('squops right, all margins', lambda a: pct(sum(v[0] for v in a['bins'].values()), sum(v[1] for v in a['bins'].values())))
    row('positions fully right', lambda a: pct(a['full'], a['frames']))
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('dirs', nargs='+')
    ap.add_argument('--bin', default='target/release/winkeye')
    ap.add_argument('--results', required=True)
    ap.add_argument('--reuse', action='store_true')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--timeout', type=float, default=300)
    args = ap.parse_args()
    os.makedirs(args.results, exist_ok=True)
    frames = []
    for d in args.dirs:
        for tf in sorted(glob.glob(os.path.join(d, '*.truth.json'))):
            name = os.path.basename(tf)[:-len('.truth.json')]
            img = os.path.join(d, name + '.jpg')
            if not os.path.exists(img):
                img = os.path.join(d, name + '.png')
            frames.append((name, tf, img))
    if not frames:
        sys.exit('no *.truth.json frames found')

    def work(fr):
        name, tf, img = fr
        out = os.path.join(args.results, name + '.json')
        return run_one(args.bin, img, out, args.reuse, args.timeout)
    with ThreadPoolExecutor(max(1, args.jobs)) as ex:
        runs = list(ex.map(work, frames))
    rows = []; report = []
    for (name, tf, img), run in zip(frames, runs):
        truth = json.load(open(tf))
        out = os.path.join(args.results, name + '.json')
        res = '%dx%d' % tuple(truth['resolution'])
        doc = None
        if run['rc'] == 0 and os.path.exists(out):
            try:
                doc = json.load(open(out))
            except Exception as e:
                run['stderr'] += f' [bad json: {e}]'
        if doc is None:
            rows.append(dict(res=res, st=None))
            report.append(dict(name=name, resolution=res, rc=run['rc'], secs=run['secs'], failed=True, stderr=run['stderr'][-600:]))
            continue
        st, R = score_frame(truth, doc)
        rows.append(dict(res=res, st=st))
        report.append(dict(name=name, resolution=res, rc=run['rc'], secs=run['secs'], failed=False, kind=truth.get('scene', {}).get('kind'),
                           recall=[st['recall_hit'], st['recall_n']], **R))
    groups = {'all': summarise(rows)}
    for res in sorted({r['res'] for r in rows}, key=lambda s: int(s.split('x')[0])):
        groups[res] = summarise([r for r in rows if r['res'] == res])
    txt = table(groups)
    print(txt)
    with open(os.path.join(args.results, 'report.json'), 'w') as fh:
        json.dump(dict(frames=report, summary={k: {kk: vv for kk, vv in v.items()} for k, v in groups.items()}), fh, indent=1)
    with open(os.path.join(args.results, 'table.txt'), 'w') as fh:
        fh.write(txt + '\n')


if __name__ == '__main__':
    main()
