// cisa-sim merge A.h5 B.h5 ... -o ALL.h5: join the shards of one scenario run (cisa/merge.hpp).
#include <boost/program_options.hpp>
#include <iostream>

#include "cisa/errors.hpp"
#include "cisa/merge.hpp"
#include "cisa/output_file.hpp"
#include "cli/cli_util.hpp"
#include "cli/commands.hpp"

namespace po = boost::program_options;

namespace cisa::cli {

int cmd_merge(int argc, char** argv) {
  return guarded("merge", [&]() {
    std::vector<std::string> inputs;
    std::string out;
    po::options_description opts("cisa-sim merge options");
    opts.add_options()("help,h", "show this help")("out,o", po::value(&out), "merged HDF5 file (required)")(
        "inputs", po::value(&inputs)->composing(), "shard files");
    po::positional_options_description pos;
    pos.add("inputs", -1);
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << "Join the HDF5 files of `cisa-sim --shard i/N` runs of one scenario into one file.\n"
                   "Refuses files from different scenarios, overrides or tool versions, and overlapping shards.\n\n"
                << "usage: cisa-sim merge A.h5 B.h5 ... -o ALL.h5\n" << opts;
      return kExitOk;
    }
    po::notify(vm);
    if (out.empty()) throw InputError({"command line", 0, "--out"}, "give the merged file with -o ALL.h5");
    if (inputs.empty()) throw InputError({"command line", 0, "inputs"}, "give at least one shard file");
    check_output(out, "--out", false);  // a bad target is refused before any reading
    const MergeResult r = merge_shards(inputs, out, join_args(argc, argv));
    std::cout << "merged " << inputs.size() << " files, " << r.rows << " points -> " << out << "\n";
    return kExitOk;
  });
}

}  // namespace cisa::cli
