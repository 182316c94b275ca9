#!/usr/bin/env python3
"""Compares two score.py results folders (DIR_BEFORE DIR_AFTER): prints the frames whose misses,
false finds, wrong sizes, squop errors or "fully right" changed."""
import json,sys
a=json.load(open(sys.argv[1]+'/report.json'))['frames']; b=json.load(open(sys.argv[2]+'/report.json'))['frames']
B={f['name']:f for f in b}
for f in a:
    g=B[f['name']]
    if f['failed'] or g['failed']:
        if f['failed']!=g['failed']: print(f['name'],'failed',f['failed'],'->',g['failed'])
        continue
    ma={m['id'] for m in f['misses']}; mb={m['id'] for m in g['misses']}
    fa=len(f['false_finds']); fb=len(g['false_finds'])
    sa={(w['id'] if isinstance(w,dict) else str(w)) for w in f['wrong_size']}; sb={(w['id'] if isinstance(w,dict) else str(w)) for w in g['wrong_size']}
    qa=(len(f['squop_missed']),len(f['squop_false']),len(f['squop_inverted'])); qb=(len(g['squop_missed']),len(g['squop_false']),len(g['squop_inverted']))
    if ma!=mb or fa!=fb or sa!=sb or qa!=qb or f['fully_right']!=g['fully_right']:
        print(f['name'], 'found', sorted(ma-mb), 'lost', sorted(mb-ma), 'false', fa,'->',fb, 'size', sorted(sa-sb), '->', sorted(sb-sa), 'squops(miss,false,inv)', qa,'->',qb, 'fully', f['fully_right'],'->',g['fully_right'])
