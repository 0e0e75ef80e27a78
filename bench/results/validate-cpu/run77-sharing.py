#!/usr/bin/env python3
# bench/results/validate-cpu/run77-sharing.txt: its output on run 77's zipmoe exec timeline (run77-cpu-work.txt has the command).
"""Do CPU-bound ops share the cores as the contention model says? For each decompression (20 us or more) of one exec
timeline: the mean number of CPU-bound spans open over it (itself, the other CPU-bound ops, the reads' CPU phases at
their ends, as op_work places them) and its wall time / its thread CPU time. Processor sharing on 2 cores predicts
max(1, open / 2). usage: run77-sharing.py TIMELINE.json"""
import json,sys,bisect,statistics as S
ev=json.load(open(sys.argv[1])); ev=ev['traceEvents'] if isinstance(ev,dict) else ev
X=[e for e in ev if e.get('ph')=='X' and 'cpu' in e.get('args',{})]
kind=lambda e:e['name'].split(' ')[0]
bound=[e for e in X if kind(e) in ('decompress','recover','expert_compute','dense_compute')]
reads=[e for e in X if kind(e)=='ssd_read']
spans=[(e['ts'],e['ts']+e['dur']) for e in bound]+[(e['ts']+e['dur']-min(e['args']['cpu'],e['dur']),e['ts']+e['dur']) for e in reads]
ed=sorted([(s,1) for s,_ in spans]+[(t,-1) for _,t in spans])
T=[];N=[];o=0
for t,d in ed:
    o+=d; T.append(t); N.append(o)
def mean_n(s,t):
    i=bisect.bisect_right(T,s)-1; acc=0; cur=s
    n=N[i] if i>=0 else 0
    j=i+1
    while j<len(T) and T[j]<t:
        acc+=(T[j]-cur)*n; cur=T[j]; n=N[j]; j+=1
    acc+=(t-cur)*n
    return acc/(t-s) if t>s else 0
bins={}
for e in bound:
    if kind(e)!='decompress' or e['dur']<20: continue
    m=mean_n(e['ts'],e['ts']+e['dur'])
    b=round(m*2)/2
    bins.setdefault(b,[]).append(e['dur']/max(e['args']['cpu'],1e-3))
for b in sorted(bins):
    v=sorted(bins[b])
    if len(v)<50: continue
    q=lambda p:v[int(p*(len(v)-1))]
    frac1=sum(1 for x in v if x<1.15)/len(v); frac2=sum(1 for x in v if x>1.8)/len(v)
    print('mean CPU-bound spans open %.1f: n=%6d wall/cpu p10 %.2f p50 %.2f p90 %.2f  <1.15: %.0f%%  >1.8: %.0f%%  PS predicts %.2f'%(b,len(v),q(.1),q(.5),q(.9),100*frac1,100*frac2,max(1,b/2)))
