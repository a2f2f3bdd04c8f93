# analysis/measure_impls.py (cuDNN, FlashAttention-2 and FlexAttention columns, issue 11): the
# --dry-run-timer path and the exit-2 cases, no GPU needed. Included from
# tests/analysis/CMakeLists.txt once CISA_ANALYSIS_PYTHON is set. The real measurement runs on the
# device (scripts/device_impls.sh).
set(_cisa_impls_test ${CMAKE_CURRENT_LIST_DIR}/test_impls.py)
get_filename_component(_cisa_impls_analysis ${CMAKE_CURRENT_LIST_DIR}/../../analysis ABSOLUTE)
foreach(_case dry_run_all_impls subset_keeps_other_columns_and_provenance
              dry_run_not_timed_phases_all_rows add_columns_replaces_then_adds_attributes dry_run_does_not_import_torch bad_input_exits_2
              no_torch_exits_2 torch_without_gpu_exits_2)
  add_test(NAME analysis.impls.${_case}
           COMMAND ${CISA_ANALYSIS_PYTHON} ${_cisa_impls_test}
                   --analysis-dir ${_cisa_impls_analysis} ImplsTest.test_${_case})
  set_tests_properties(analysis.impls.${_case} PROPERTIES LABELS analysis TIMEOUT 300)
endforeach()
