#!/usr/bin/env python3
"""Decode the control codes of `cuobjdump --dump-sass` output (sm_70 and newer, 128-bit words):
stall cycles, yield, write / read scoreboard and the scoreboards an instruction waits for.

  usage: sass_ctrl.py FUNCTION_SASS.txt [FROM_HEX [TO_HEX]]

Bits 105-125 of each instruction: stall (4), yield (1), write barrier (3), read barrier (3),
wait mask (6), reuse (4); barrier 7 means none. Used to see which loads share a scoreboard.
"""
import re,sys
lines=open(sys.argv[1]).read().split('\n')
ins=[]
i=0
while i < len(lines):
    m=re.match(r'\s*/\*([0-9a-f]+)\*/\s*(.*?);?\s*/\* (0x[0-9a-f]+) \*/',lines[i])
    if m:
        addr=int(m.group(1),16); text=m.group(2).strip().rstrip(';')
        # the control bits sit in the high 64-bit word, on the next line
        c=int(re.search(r'/\* (0x[0-9a-f]+) \*/',lines[i+1]).group(1),16)>>41
        ins.append(dict(addr=addr,text=text,stall=c&15,yld=(c>>4)&1,wb=(c>>5)&7,rb=(c>>8)&7,wait=(c>>11)&63,reuse=(c>>17)&15))
        i+=2
    else: i+=1
lo=int(sys.argv[2],16) if len(sys.argv)>2 else 0
hi=int(sys.argv[3],16) if len(sys.argv)>3 else 1<<40
for x in ins:
    if lo<=x['addr']<hi:
        wb='-' if x['wb']==7 else x['wb']; rb='-' if x['rb']==7 else x['rb']
        w=''.join(str(b) for b in range(6) if x['wait']>>b&1)
        print(f"{x['addr']:05x} S{x['stall']:<2d} W{wb} R{rb} wait[{w:6s}] {x['text']}")
