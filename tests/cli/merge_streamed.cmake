# cmake -DEXE=cisa-sim -DDIR=<scratch> -P merge_streamed.cmake
# The streamed merge (session 14) as a user runs it: an 8,000-point sweep in 5 shards (packed
# layout: >= 4,096 rows), merged in reverse order, gives the direct run's columns (checked with
# h5py where a python3 has it); a merge of the merged file with itself is refused.
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
file(WRITE ${DIR}/sweep.yaml "name: merge_streamed
model: inkling_small
tp: 8
hardware: h200_sxm
basis: calibrated
cisa: {chunk: 16, window: 128, budget: 4096, G: 16}
workload: {phase: terminal_prefill, context: 1048576, batch: 16, prefill_tokens: 512}
sweep:
  context: [131072, 262144, 524288, 1048576]
  batch: [1, 16]
  budget: [512, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144]
  G: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
  window: [0, 16, 32, 64, 128, 192, 256, 384, 512, 1024]
")
set(files)
foreach(i 4 3 2 1 0)
  execute_process(COMMAND ${EXE} --scenario ${DIR}/sweep.yaml --shard ${i}/5 --out ${DIR}/s${i}.h5 --format none RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "shard ${i}/5 failed: ${rc}")
  endif()
  list(APPEND files ${DIR}/s${i}.h5)
endforeach()
execute_process(COMMAND ${EXE} --scenario ${DIR}/sweep.yaml --out ${DIR}/direct.h5 --format none RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the direct run failed: ${rc}")
endif()
execute_process(COMMAND ${EXE} merge ${files} -o ${DIR}/all.h5 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "merged 5 files, 8000 points" OR err MATCHES "warning")
  message(FATAL_ERROR "merge failed (${rc}): ${out} ${err}")
endif()
execute_process(COMMAND ${EXE} merge ${DIR}/all.h5 ${DIR}/s0.h5 -o ${DIR}/bad.h5 RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "appears in two files" OR EXISTS ${DIR}/bad.h5)
  message(FATAL_ERROR "a point in two files was not refused cleanly (${rc}): ${err}")
endif()
foreach(py /usr/bin/python3 python3)
  execute_process(COMMAND ${py} -c "import h5py, numpy" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    execute_process(COMMAND ${py} -c "
import sys, h5py, numpy as np
a, b = h5py.File(sys.argv[1], 'r')['points'], h5py.File(sys.argv[2], 'r')['points']
assert list(a) == list(b), 'columns differ'
for k in a:
    x, y = a[k][()], b[k][()]
    same = np.array_equal(x.view(np.uint64), y.view(np.uint64)) if x.dtype.kind == 'f' else np.array_equal(x, y)
    assert same and x.dtype.kind == y.dtype.kind, k
print('equal', len(list(a)), 'columns')
" ${DIR}/all.h5 ${DIR}/direct.h5 RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "merged file differs from the direct run: ${out} ${err}")
    endif()
    message(STATUS "${out}")
    break()
  endif()
endforeach()
