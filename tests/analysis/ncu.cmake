# analysis/ncu_points.py (Nsight Compute DRAM bytes per component) without a GPU: re-parses the
# committed hand-made ncu outputs in ncu_fixture/ and drives a fake ncu script. Included from
# tests/analysis/CMakeLists.txt once CISA_ANALYSIS_PYTHON is set (needs numpy and h5py).
set(_cisa_ncu_test ${CMAKE_CURRENT_LIST_DIR}/test_ncu_points.py)
foreach(_case from_raw_columns no_pred_columns_no_err points_subset bad_input_exits_2_file_unchanged
              failed_point_others_written_exit_1 every_point_failed_file_byte_identical
              live_fake_ncu_keep_raw_then_from_raw live_cisa_sim_gets_measure_on
              live_failure_and_timeout_exit_1 live_wrong_scenario_detected live_missing_ncu_exit_2
              units_and_sample)
  add_test(NAME analysis.ncu_points.${_case}
           COMMAND ${CISA_ANALYSIS_PYTHON} ${_cisa_ncu_test}
                   --analysis-dir ${CMAKE_SOURCE_DIR}/analysis NcuPointsTest.test_${_case})
  set_tests_properties(analysis.ncu_points.${_case} PROPERTIES LABELS analysis TIMEOUT 120)
endforeach()

# analysis/ncu_page_reads.py and analysis/attn_cta_progress.py (the L2-sharing question of the CISA
# byte model, session 22) on hand-made inputs.
foreach(_case page_reads cta_progress_lockstep_and_spread)
  add_test(NAME analysis.l2_sharing_tools.${_case}
           COMMAND ${CISA_ANALYSIS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test_l2_sharing_tools.py
                   --analysis-dir ${CMAKE_SOURCE_DIR}/analysis ToolsTest.test_${_case})
  set_tests_properties(analysis.l2_sharing_tools.${_case} PROPERTIES LABELS analysis TIMEOUT 120)
endforeach()

# analysis/l2_trace_sim.py (session 24) with the project's l2_reuse engine.
if(TARGET l2_reuse)
  add_test(NAME analysis.l2_sharing_tools.trace_sim
           COMMAND ${CISA_ANALYSIS_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/test_l2_sharing_tools.py
                   --analysis-dir ${CMAKE_SOURCE_DIR}/analysis --l2-reuse $<TARGET_FILE:l2_reuse>
                   ToolsTest.test_trace_sim)
  set_tests_properties(analysis.l2_sharing_tools.trace_sim PROPERTIES LABELS analysis TIMEOUT 120)
endif()
