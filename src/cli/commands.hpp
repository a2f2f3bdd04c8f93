// Sub-commands of the cisa-sim CLI. Each takes the arguments after its own name and returns the
// process exit code: 0 success, 2 bad input (message names file:line and field), 1 internal error.
#pragma once

namespace cisa::cli {

int cmd_run(int argc, char** argv);       // cisa-sim [--scenario FILE] ...  (default)
int cmd_ceilings(int argc, char** argv);  // cisa-sim ceilings ...
int cmd_presets(int argc, char** argv);   // cisa-sim presets
int cmd_profiles(int argc, char** argv);  // cisa-sim profiles [--show NAME] [--gpu GPU]
int cmd_scenarios(int argc, char** argv); // cisa-sim scenarios [--show NAME]
int cmd_merge(int argc, char** argv);     // cisa-sim merge A.h5 B.h5 -o ALL.h5
int cmd_calibrate(int argc, char** argv); // cisa-sim calibrate [--out FILE]
int cmd_designs(int argc, char** argv);   // cisa-sim designs ... (src/cli/cmd_designs.cpp, issue 15)
int cmd_route(int argc, char** argv);     // cisa-sim route ...   (src/cli/cmd_route.cpp, issue 7)
int cmd_report(int argc, char** argv);    // cisa-sim report ...  (src/cli/cmd_report.cpp, issue 6)
int cmd_plan(int argc, char** argv);      // cisa-sim plan ...    (src/cli/cmd_plan.cpp, issue 5)

}  // namespace cisa::cli
