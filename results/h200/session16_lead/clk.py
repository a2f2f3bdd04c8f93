# Session 16 diagnostic: does the H200's tensor throughput depend on how long the load lasts (power /
# clock management)? cuBLAS BF16 GEMM bursts of increasing length, each after an idle gap, timed with
# CUDA events; nvidia-smi samples SM clock, power and throttle reasons meanwhile (read only).
import torch, time, subprocess, json, sys
dev = torch.device('cuda')
n = 4096
a = torch.randn(n, n, dtype=torch.bfloat16, device=dev); b = torch.randn_like(a); c = torch.empty_like(a)
flop = 2 * n ** 3
for _ in range(20): torch.matmul(a, b, out=c)
torch.cuda.synchronize()
res = []
def burst(k, gap_s):
    torch.cuda.synchronize(); time.sleep(gap_s)
    e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    ev = [torch.cuda.Event(enable_timing=True) for _ in range(k + 1)]
    ev[0].record()
    for i in range(k):
        torch.matmul(a, b, out=c); ev[i + 1].record()
    torch.cuda.synchronize()
    per = [ev[i].elapsed_time(ev[i + 1]) for i in range(k)]
    tot = ev[0].elapsed_time(ev[k])
    return tot, per
for gap in (0.5,):
    for k in (2, 5, 10, 20, 50, 100, 200, 400):
        tot, per = burst(k, gap)
        # throughput of the first 1 ms, and of successive slices
        cum = 0; marks = {}
        done = 0
        for i, p in enumerate(per):
            cum += p
            for m in (1, 2, 5, 10, 20, 40, 80):
                if cum >= m and m not in marks: marks[m] = (i + 1) * flop / (cum * 1e-3) / 1e12
        tail = per[len(per) // 2:]
        res.append(dict(gap=gap, k=k, ms=tot, tflops=k * flop / (tot * 1e-3) / 1e12,
                        first_gemm_tf=flop / (per[0] * 1e-3) / 1e12,
                        last_half_tf=len(tail) * flop / (sum(tail) * 1e-3) / 1e12, cum_tf_at_ms=marks))
        print(json.dumps(res[-1]), flush=True)
# per-GEMM throughput over a 400 ms burst, in 5 ms windows
tot, per = burst(2400, 1.0)
cum = 0; win = []; acc = 0; cnt = 0; t0 = 0
for p in per:
    cum += p; acc += p; cnt += 1
    if acc >= 5:
        win.append((round(cum, 1), round(cnt * flop / (acc * 1e-3) / 1e12, 1))); acc = 0; cnt = 0
print(json.dumps(dict(long_burst_ms=tot, windows_ms_tf=win)), flush=True)
