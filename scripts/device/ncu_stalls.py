#!/usr/bin/env python3
"""Per-SASS-line warp stall samples from `ncu -i REP --page source --csv --print-source sass`.

  usage: ncu_stalls.py SOURCE.csv [FROM_LINE [TO_LINE]]

Prints line index, samples, executions, the instruction and the non-zero counts of eight stall
reasons (cols below; the warpgroup-arrive stall has no column on this page). The line index
times 16 is the instruction's offset in the function (sass_ctrl.py).
"""
import csv, sys
rows=list(csv.reader(open(sys.argv[1])))
h=rows[1]; data=rows[2:]
ix={k:i for i,k in enumerate(h)}
cols=['stall_long_sb','stall_wait','stall_selected','stall_dispatch','stall_no_inst','stall_math','stall_barrier','stall_membar']
tot=sum(int(r[ix['Warp Stall Sampling (All Samples)']] or 0) for r in data)
print("total samples",tot)
lo=int(sys.argv[2]) if len(sys.argv)>2 else 0
hi=int(sys.argv[3]) if len(sys.argv)>3 else len(data)
for n,r in enumerate(data):
    if n<lo or n>=hi: continue
    s=int(r[ix['Warp Stall Sampling (All Samples)']] or 0)
    ex=r[ix['Instructions Executed']]
    det=" ".join(f"{c.replace('stall_','')}={r[ix[c]]}" for c in cols if r[ix[c]] not in ('0',''))
    print(f"{n:5d} {s:6d} {ex:>9s} {r[ix['Source']].strip()[:70]:70s} {det}")
