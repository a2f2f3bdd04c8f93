# analysis/measure_peers.py (the measured cuDNN SDPA peer columns): the --dry-run-timer path and
# the exit-2 cases, no GPU needed. Included from tests/analysis/CMakeLists.txt once
# CISA_ANALYSIS_PYTHON is set. The real measurement runs on the device (see analysis/README.md).
set(_cisa_peers_test ${CMAKE_CURRENT_LIST_DIR}/test_peers.py)
get_filename_component(_cisa_peers_analysis ${CMAKE_CURRENT_LIST_DIR}/../../analysis ABSOLUTE)
foreach(_case dry_run_measured_rows dry_run_all_rows_not_timed_phases dry_run_does_not_import_torch
              bad_input_exits_2 no_torch_exits_2 torch_without_gpu_exits_2 no_gpu_here_exits_2)
  add_test(NAME analysis.peers.${_case}
           COMMAND ${CISA_ANALYSIS_PYTHON} ${_cisa_peers_test}
                   --analysis-dir ${_cisa_peers_analysis} PeersTest.test_${_case})
  # a case that cannot apply here (torch with a GPU present) prints "skipped '...'"
  set_tests_properties(analysis.peers.${_case} PROPERTIES LABELS analysis TIMEOUT 300
                       SKIP_REGULAR_EXPRESSION "skipped '")
endforeach()
