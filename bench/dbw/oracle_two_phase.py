import json, subprocess, os, itertools, statistics as st
CH="/work/main/build/bin/chorus"
def run(scen, pols, env=None, seeds=10):
    e=dict(os.environ); 
    if env: e["CHORUS_STATIC_SWITCH"]=env
    out=subprocess.run([CH,"simulate-quorum","--scenario",scen,"--curvature","--compare",",".join(pols),"--seeds",str(seeds),"--seed","1","--jobs","2","--json"],capture_output=True,text=True,env=e)
    d=json.loads(out.stdout)
    return {p["policy"]: (p["median_time_s"] if p["reached"]*2>p["runs"] else float("inf")) for p in d["policies"]}
res={}
for scen in ["S1","S2","S3","S4"]:
    base=run(scen,["static:b=%d"%b for b in range(4,15)]+["dbw+"])
    best_b=min((v,k) for k,v in base.items() if k.startswith("static"))
    best=(best_b[0],best_b[1],"-")
    for R in [60,120,180]:
        for k2 in [4,6,8,10]:
            r=run(scen,["static:k=%d"%k1 for k1 in [2,3,4,5,6,8]],env="%d:%d"%(R,k2))
            for p,v in r.items():
                if v<best[0]: best=(v,p,"R%d->k%d"%(R,k2))
    print(scen,"best static %s %.3fs; dbw+ %.3fs (%.2fx); best two-phase %s %s %.3fs (%.2fx of best static)"%(best_b[1],best_b[0],base["dbw+"],best_b[0]/base["dbw+"],best[1],best[2],best[0],best_b[0]/best[0]),flush=True)
