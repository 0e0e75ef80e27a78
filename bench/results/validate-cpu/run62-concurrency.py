import json,sys,collections,bisect
def load(f):
    d=json.load(open(f)); ev=d['traceEvents'] if isinstance(d,dict) else d
    ops=[]
    for e in ev:
        if e.get('ph')!='X': continue
        a=e.get('args',{})
        if 'step' not in a: continue
        k=e['name'].split(' L')[0]
        if k in ('decompress','recover','expert_compute','dense_compute'):
            ops.append((e['ts'],e['ts']+e['dur'],k,a['step']==0))
    return ops
def conc(ops):
    # time-weighted mean number of CPU-bound ops active during each op
    pts=[]
    for s,t,k,p in ops: pts.append((s,1)); pts.append((t,-1))
    pts.sort()
    times=[p[0] for p in pts]; cnt=[]; c=0
    for x,dlt in pts: c+=dlt; cnt.append(c)
    # integral prefix: I(x) = integral_0^x count
    pref=[0.0]
    for i in range(1,len(times)): pref.append(pref[-1]+cnt[i-1]*(times[i]-times[i-1]))
    def integ(x):
        i=bisect.bisect_right(times,x)-1
        if i<0: return 0.0
        return pref[i]+cnt[i]*(x-times[i])
    res=collections.defaultdict(list)
    for s,t,k,p in ops:
        if t>s and not p: res[k].append((integ(t)-integ(s))/(t-s))
    return res
for f in sys.argv[1:]:
    r=conc(load(f))
    print(f, {k:'%.2f'%(sum(v)/len(v)) for k,v in sorted(r.items())})
