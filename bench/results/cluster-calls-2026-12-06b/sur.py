import json,statistics as st,sys,glob
class np:
    @staticmethod
    def mean(v): return sum(v)/len(v)
    @staticmethod
    def median(rows,axis=0): return [st.median(c) for c in zip(*rows)]
    @staticmethod
    def polyfit(X,Y,d):
        n=len(X); mx=sum(X)/n; my=sum(Y)/n; b=sum((x-mx)*(y-my) for x,y in zip(X,Y))/sum((x-mx)**2 for x in X); return b, my-b*mx
def solve3(A,y):
    # normal equations
    M=[[sum(A[r][i]*A[r][j] for r in range(len(A))) for j in range(3)] for i in range(3)]
    v=[sum(A[r][i]*y[r] for r in range(len(A))) for i in range(3)]
    import copy; M=copy.deepcopy(M)
    for i in range(3):
        p=M[i][i]
        for j in range(i+1,3):
            f=M[j][i]/p
            for k in range(3): M[j][k]-=f*M[i][k]
            v[j]-=f*v[i]
    x=[0,0,0]
    for i in (2,1,0): x[i]=(v[i]-sum(M[i][k]*x[k] for k in range(i+1,3)))/M[i][i]
    return x
class V(list):
    def __matmul__(s,o): return sum(a*b for a,b in zip(s,o))
def anchored(pts):
    lone=[y for x,y in pts if x==0]; f=st.median(lone)
    ax=sum(x*x for x,y in pts); axy=sum(x*(y-f) for x,y in pts); return f, max(axy/ax,0)
def ols(pts):
    X=[p[0] for p in pts]; Y=[p[1] for p in pts]; b,a=np.polyfit(X,Y,1); return a,b
def burstline(p, stat, blocks):
    M={k:stat([q[4] for q in p if q[0] in blocks and q[1]==k]) for k in (1,2,4,8,16)}
    a=M[1]; xs=[(k-1)/2 for k in (2,4,8,16)]; b=sum(x*(M[k]-a) for x,k in zip(xs,(2,4,8,16)))/sum(x*x for x in xs)
    return a,b
def bfree(p,stat,blocks):
    M={k:stat([q[4] for q in p if q[0] in blocks and q[1]==k]) for k in (1,2,4,8,16)}
    b,a=np.polyfit([(k-1)/2 for k in M],[M[k] for k in M],1); return a,b
def anch_mean(pts):
    f=st.mean([y for x,y in pts if x==0]); ax=sum(x*x for x,y in pts); axy=sum(x*(y-f) for x,y in pts); return f,axy/ax
def btotal(p,blocks):
    M={k:st.mean([q[4] for q in p if q[0] in blocks and q[1]==k]) for k in (1,2,4,8,16)}
    # least squares of burst totals k*M_k on (k, k(k-1)/2), one row per burst size
    rows=[(k,k*(k-1)/2,k*M[k]) for k in M]
    A=[[r[0],r[1]] for r in rows]; y=[r[2] for r in rows]
    s11=sum(a*a for a,_ in A); s12=sum(a*b for a,b in A); s22=sum(b*b for _,b in A); t1=sum(a*v for (a,_),v in zip(A,y)); t2=sum(b*v for (_,b),v in zip(A,y))
    d=s11*s22-s12*s12; return (t1*s22-t2*s12)/d,(s11*t2-s12*t1)/d
def cap4(v):
    m=st.median(v); return st.mean([x for x in v if x<=4*m])
def cap3(v):
    m=st.median(v); return st.mean([x for x in v if x<=3*m])
def tmean(v,frac=0.1):
    v=sorted(v); n=len(v); c=int(n*frac); return st.mean(v[c:n-c] if n-2*c>0 else v)
res={}
for f in sys.argv[1:]:
    j=json.load(open(f)); c=j['calibration']; p=c['points_us']
    names=['first']+list(c['candidates'])
    L=[(1e6*c['call_overhead_s'],1e6*c['call_overhead_per_inflight_s'])]+[tuple(1e6*v for v in c['candidates'][k]) for k in c['candidates']]
    E=[j['errors']['cost']['runs']]+[j['errors']['cost_candidates'][k]['runs'] for k in c['candidates']]
    A=[[1,a,b] for a,b in L]
    coefs=[V(solve3(A,[e[r] for e in E])) for r in range(len(E[0]))]
    resid=max(abs(coefs[r]@row-e[r]) for r in range(len(E[0])) for row,e in zip(A,E))
    allb=set(range(10)); pooled=[(q[2],q[4]) for q in p if q[0]<100]
    X=[x for x,_ in pooled]
    cand={'first':L[0],'pooled_anch':anchored(pooled),'pooled_ols':ols(pooled),
      'burst_mean':burstline(p,st.mean,allb),'burst_median':burstline(p,st.median,allb),
      'burst_tmean':burstline(p,tmean,allb),
      'burst_mean_cpu':burstline([q for q in p if q[0]==100]+[[0,8,x,0,y] for (_,k,x,_,y) in p if k==8],st.mean,{0,100}),
      'blocks_med_ols':tuple(np.median([ols([(q[2],q[4]) for q in p if q[0]==b]) for b in range(10)],axis=0)),
      'blocks_med_burstmean':tuple(np.median([burstline(p,st.mean,{b}) for b in range(10)],axis=0)),
      'first_burst_mean':burstline(p,st.mean,{0}),
      'burst_mean_free':bfree(p,st.mean,allb),
      'burst_med_free':bfree(p,st.median,allb),
      'anch_mean':anch_mean(pooled),
      'burst_total':btotal(p,allb),
      'blocks_med_free':tuple(np.median([bfree(p,st.mean,{b}) for b in range(10)],axis=0)),
      'free_cap4':bfree(p,cap4,allb),
      'free_cap3':bfree(p,cap3,allb),
    }
    print('%-16s resid %.3f'%(f,resid), ' '.join('%s=%.0f+%.0f:%s'%(k,a,b,','.join('%+.1f'%(100*(co@[1,a,b])) for co in coefs)) for k,(a,b) in cand.items()))
    for k,(a,b) in cand.items(): res.setdefault(f.split('.')[0],{}).setdefault(k,[]).extend([co@[1,a,b] for co in coefs]); res[f.split('.')[0]].setdefault(k+'_l',[]).append((a,b))
print()
for cell,d in res.items():
    for k,v in d.items():
        if k.endswith('_l'): continue
        l=d[k+'_l']
        print('%s %-22s mean %+5.1f  max|e| %5.1f  within10 %d/%d  fixed %3.0f-%3.0f slope %3.0f-%3.0f'%(cell,k,100*np.mean(v),100*max(map(abs,v)),sum(abs(x)<=.1 for x in v),len(v),min(a for a,b in l),max(a for a,b in l),min(b for a,b in l),max(b for a,b in l)))
