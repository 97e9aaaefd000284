import json, glob, os, sys, statistics
out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
def lines(pattern):
    for f in sorted(glob.glob(os.path.join(out, pattern))):
        for l in open(f):
            l = l.strip()
            if l.startswith('{'):
                try: yield f, json.loads(l)
                except Exception: pass
print('## bench_pipeline fps (ratio to its parts limit)')
rows = {}
for f, d in lines('pipeline_*.jsonl'):
    if d.get('bench') != 'pipeline': continue
    w = os.path.basename(f).split('_')[1]
    rows.setdefault(d['config'], {}).setdefault(w, []).append(f"{d['fps']:,.0f} ({d['ratio']:.3f})")
for c, r in rows.items(): print(c, '| before:', ', '.join(r.get('before', [])), '| after:', ', '.join(r.get('after', [])))
print('## bench_inference frames/s')
rows = {}
for f, d in lines('inference_*.jsonl'):
    if d.get('bench') != 'inference' or 'mode' not in d: continue
    w = os.path.basename(f).split('_')[1]
    k = (d['mode'], d['model'], d['actors'])
    rows.setdefault(k, {}).setdefault(w, []).append(f"{d['frames_per_s']:,.0f}")
for k, r in rows.items(): print(k, '| before:', ', '.join(r.get('before', [])), '| after:', ', '.join(r.get('after', [])))
print('## bench_transport')
rows = {}
for f, d in lines('transport_*.jsonl'):
    w = os.path.basename(f).split('_')[1]
    k = tuple((kk, d[kk]) for kk in ('transport', 'clients', 'obs_bytes') if kk in d)
    v = d.get('steps_per_s') or d.get('round_trips_per_s') or d.get('rate')
    rows.setdefault(k, {}).setdefault(w, []).append(v if v is None else f"{v:,.0f}")
    rows[k].setdefault('_keys', list(d.keys()))
for k, r in rows.items(): print(k, '| before:', r.get('before'), '| after:', r.get('after'))
print('## compile_time')
for f, d in lines('compile_time.jsonl'): print(d['tree'], d['seconds'])
print('## learning')
for prog in ('cartpole_vtrace', 'vtrace_breakout', 'ppo_hopper'):
    for w in ('before', 'after'):
        vals = []
        for s in (101, 102, 103, 104, 105):
            p = os.path.join(out, 'runs', w, f'{prog}_{s}.json')
            try:
                d = [json.loads(l) for l in open(p) if l.startswith('{')][-1]
                vals.append((s, d.get('mean_return'), d.get('evaluation_mean_return'), round(d.get('seconds', 0))))
            except Exception: pass
        print(prog, w, vals)
