#!/usr/bin/python3
import csv, math, statistics, itertools
rows=[r for r in csv.DictReader(open("results/h200/session11_projection/proj_grid.csv"))]
rows2=[r for r in csv.DictReader(open("results/h200/session11_projection/proj_grid2.csv"))]
def data(rows, sub=None):
    d=[]
    for r in rows:
        m,n,k=int(r["m"]),int(r["n"]),int(r["k"]); t=float(r["ms_queued"])*1e-3
        if sub and not sub(m,n,k): continue
        d.append((m,n,k,2.0*(m*k+k*n+m*n),2.0*m*n*k,t))
    return d
def fit(d):
    best=None
    for R in [x*0.02e12 for x in range(100,240)]:
        for F in [x*5e12 for x in range(100,170)]:
            a=[max(b/R,f/F) for (_,_,_,b,f,t) in d]
            fl=sum((t-ai)/t**2 for ai,(*_,t) in zip(a,d))/sum(1/t**2 for *_,t in d)
            fl=max(fl,0)
            e=math.sqrt(sum(((fl+ai)/t-1)**2 for ai,(*_,t) in zip(a,d))/len(d))
            if best is None or e<best[0]: best=(e,R,F,fl)
    return best
def score(d,R,F,fl):
    es=[t/(fl+max(b/R,f/F))-1 for (_,_,_,b,f,t) in d]
    return statistics.median([abs(e) for e in es]), max(abs(e) for e in es)
full=data(rows)
b=fit(full); print("full fit rms %.3f R %.2f F %.0f floor %.1f us"%(b[0],b[1]/1e12,b[2]/1e12,b[3]*1e6), "score",score(full,*b[1:]))
sub=lambda m,n,k: m in (128,256,512) and k in (4096,8192) and n in (1024,4096,16384,65536)
ds=data(rows,sub); b2=fit(ds); print("subset fit rms %.3f R %.2f F %.0f floor %.1f"%(b2[0],b2[1]/1e12,b2[2]/1e12,b2[3]*1e6), "on full",score(full,*b2[1:]), "on grid2", score(data(rows2),*b2[1:]))
for (m,n,k,bb,f,t) in full:
    e=t/(b2[3]+max(bb/b2[1],f/b2[2]))-1
    if abs(e)>0.12: print(m,n,k,"%+.2f"%e, "%.1f"%(t*1e6))
import numpy as np
def fit3(d):
    best=None
    for R in [x*0.02e12 for x in range(150,240)]:
        for F in [x*5e12 for x in range(120,170)]:
            a=np.array([max(b/R,f/F) for (_,_,_,b,f,t) in d]); t=np.array([x[5] for x in d]); k=np.array([x[2] for x in d],float)
            A=np.stack([np.ones_like(t)/t, k/t],1); y=(t-a)/t
            c,*_=np.linalg.lstsq(A,y,rcond=None); c=np.maximum(c,0)
            e=np.sqrt(np.mean(((c[0]+c[1]*k+a)/t-1)**2))
            if best is None or e<best[0]: best=(e,R,F,c[0],c[1])
    return best
def score3(d,R,F,fl,ck):
    es=[t/(fl+ck*k+max(b/R,f/F))-1 for (_,_,k,b,f,t) in d]
    return statistics.median([abs(e) for e in es]), max(abs(e) for e in es)
b3=fit3(ds); print("subset fit3 rms %.3f R %.2f F %.0f floor %.1f us per-k %.2f ns"%(b3[0],b3[1]/1e12,b3[2]/1e12,b3[3]*1e6,b3[4]*1e9), "on full",score3(full,*b3[1:]), "grid2", score3(data(rows2),*b3[1:]))
for (m,n,k,bb,f,t) in full:
    e=t/(b3[3]+b3[4]*k+max(bb/b3[1],f/b3[2]))-1
    if abs(e)>0.12: print(m,n,k,"%+.2f"%e, "%.1f"%(t*1e6))
