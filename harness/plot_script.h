// Plots a command's table through the source tree's plotting scripts (scripts/plot_*.py, which draw with the
// experiments' shared style, experiments/plotlib.py): `--plot FILE` of replay --mrc and compare.
//   plot_table("plot_mrc.py", csv_text, csv_path, out):
//     the table is csv_path when the command wrote one (--csv), else a private temporary file, removed after;
//     runs $MOESIM_PYTHON (default Debian's /usr/bin/python3, which has python3-matplotlib) SCRIPT TABLE OUT.
// The script's failure (no matplotlib, a table it cannot read) is a moesim::Error naming the script and its
// exit status; a missing script (a binary without its source tree) is one too. OUT's format follows its
// extension.
#pragma once

#include <string>
#include <vector>

namespace moesim::harness {

// `extra`: more arguments after OUT (plot_sweep.py's columns).
void plot_table(const std::string& script, const std::string& csv_text, const std::string& csv_path,
                const std::string& out, const std::vector<std::string>& extra = {});

}  // namespace moesim::harness
