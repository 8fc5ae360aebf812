#!/usr/bin/python3
"""Independent adaptive tempering SMC (Ridgway et al. algorithm 1) in numpy,
to check the Go engine's log Z for bias: z-scored Pima.tr, prior N(0, I),
ESS target 0.5 N by bisection, multinomial resampling, random-walk Metropolis
with proposal 2.38^2/d times the resampled particles' covariance.

    /usr/bin/python3 auc_smc.py GAMMA PARTICLES REPEATS MOVES [SEED]

prints the mean log Z over the repeats with its standard error. (At gamma 50,
5,000 particles: -12.5983 +- 0.0061 with 40 repeats of 10 moves, -12.6013 +-
0.0065 with 16 of 30; the exact value is -12.6002, pima_is_reference.csv.)
"""
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from auc_reference import load, math, misordered, np, zscore  # noqa: E402

names,x,y=load(); x=zscore(x)
gamma=float(sys.argv[1]); N=int(sys.argv[2]); reps=int(sys.argv[3]); moves=int(sys.argv[4]); fixed=False
M=68*132
def R(th): return misordered(x,y,th)/M
rng=np.random.default_rng(int(sys.argv[5]) if len(sys.argv)>5 else 1)
out=[]; sched=None
for rep in range(reps):
    th=rng.standard_normal((N,7)); r=R(th); cur=0; lz=0; temps=[]
    while True:
        def ess(dl):
            w=np.exp(-dl*(r-r.min())); return w.sum()**2/(w*w).sum()
        if fixed and sched is not None:
            dl=sched[len(temps)]-cur
        else:
            dl=gamma-cur
            if ess(dl)<0.5*N:
                lo,hi=0.0,dl
                for _ in range(60):
                    mid=0.5*(lo+hi)
                    if ess(mid)>=0.5*N: lo=mid
                    else: hi=mid
                dl=lo
        cur+=dl
        if gamma-cur<1e-12*gamma: cur=gamma
        w=np.exp(-dl*(r-r.min())); lz+=-dl*r.min()+math.log(w.mean()); temps.append(cur)
        if cur==gamma: break
        idx=rng.choice(N,size=N,p=w/w.sum()); th=th[idx]; r=r[idx]
        L=np.linalg.cholesky(2.38**2/7*np.cov(th.T))
        for _ in range(moves):
            pr=th+rng.standard_normal((N,7))@L.T; rq=R(pr)
            ok=np.log(rng.random(N)) < -0.5*(pr*pr).sum(1)+0.5*(th*th).sum(1)-cur*(rq-r)
            th[ok]=pr[ok]; r[ok]=rq[ok]
    if sched is None: sched=temps
    out.append(lz)
out=np.array(out)
print(f'gamma {gamma} N {N} reps {reps} moves {moves} fixed {fixed}: mean log Z {out.mean():.4f} +- {out.std(ddof=1)/math.sqrt(reps):.4f}, sd {out.std(ddof=1):.4f}, temps {len(sched)}')
