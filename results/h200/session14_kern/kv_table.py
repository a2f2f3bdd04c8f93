# Builds kv_heads_scoring.csv / .md from run1/kv_ab.log (main's kernels, "default" rows) and
# run2/kv_ab.log ("t8" rows = main's grid, CISA_SCORE_TILES=8) plus shapes_plan.txt (host plan).
import re, statistics as st, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
def parse(path, want):
    label = None
    for line in open(path):
        m = re.match(r'### r\d (\S+)', line)
        if m: label = m.group(1); continue
        if label != want: continue
        f = line.split()
        if len(f) > 6 and f[0].startswith(('score_prefill_kv', 'copy_')) and f[3] == 'ms':
            rows[f[0]]['ms'].append(float(f[2])); rows[f[0]]['gb'] = float(f[4]); rows[f[0]]['bound'] = float(f[9])
parse('run1/kv_ab.log', 'default'); parse('run2/kv_ab.log', 't8')
plan = {}
for line in open('shapes_plan.txt').readlines()[1:]:
    a, b, c = line.split('|')
    kv, B, h, P, G, W, K = a.split(); n_rows, n_groups, max_rows, stride, s16 = b.split(); rg, ru, keys = c.split()
    key = f'score_prefill_kv{kv}_b{B}' + ('' if (h, P, G, W, K) == ('1048576', '512', '4', '128', '4096') else f'_h{h}_p{P}_g{G}_w{W}_k{K}')
    plan[key] = dict(rows=n_rows, groups=n_groups, max_rows=max_rows, stride_mod16=s16, reps_MB=float(rg), reps_unique_MB=float(ru), keys_MB=float(keys))
out = open('kv_heads_scoring.csv', 'w')
out.write('case,rows,groups,max_rows,stride_mod16,reps_MB_per_group,reps_MB_unique,keys_MB,bench_bytes_GB,total_ms,score_pages_ms,sum_iq_ms,bound_ms,bound_over_ms,TBps_bench_bytes,TBps_unique_bytes,n\n')
md = ['| case | rows / groups / max rows | stride % 16 | reps MB (unique) | keys MB | total us | score_pages us | sum_iq us | x bound | TB/s (unique R+W) |', '|---|---|---|---|---|---:|---:|---:|---:|---:|']
for name in rows:
    if ':' in name or name.startswith('copy'): continue
    r = rows[name]; sp = rows[name + ':score_pages']; si = rows[name + ':sum_index_queries']; p = plan[name]
    t = st.median(r['ms']); tsp = st.median(sp['ms']); tsi = st.median(si['ms'])
    uniq = (p['reps_unique_MB'] + p['keys_MB']) / 1e3
    out.write(f"{name},{p['rows']},{p['groups']},{p['max_rows']},{p['stride_mod16']},{p['reps_MB']},{p['reps_unique_MB']},{p['keys_MB']},{r['gb']},{t:.4f},{tsp:.4f},{tsi:.4f},{r['bound']},{r['bound']/t:.3f},{r['gb']/t:.3f},{uniq/t:.3f},{len(r['ms'])}\n")
    md.append(f"| {name.replace('score_prefill_','')} | {p['rows']} / {p['groups']} / {p['max_rows']} | {p['stride_mod16']} | {p['reps_MB']:.0f} ({p['reps_unique_MB']:.0f}) | {p['keys_MB']:.0f} | {t*1e3:.1f} | {tsp*1e3:.1f} | {tsi*1e3:.1f} | {r['bound']/t:.2f} | {uniq/t:.2f} |")
c = rows['copy_256MiB']
md.append(f"\ncopy_256MiB (cudaMemcpy d2d, L2 flushed, bytes = read + written): {st.median(c['ms'])*1e3:.1f} us = {c['gb']/st.median(c['ms']):.2f} TB/s (n={len(c['ms'])})")
open('kv_heads_scoring.md', 'w').write('\n'.join(md) + '\n')
print('\n'.join(md))
