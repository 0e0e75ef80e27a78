// Where the real cluster runs. Its server processes talk gRPC, and loading gRPC, protobuf and abseil (some 50
// shared libraries) is most of a moesim process's start-up; every other command (a replay, a run, a sweep
// point) would pay it without using it. So a build with exec makes two executables from the same commands:
// `moesim`, linked without the real cluster's code (harness/cluster/cluster_relay.cpp stands in for it), and
// `moesim-cluster` beside it, with that code. `moesim` hands a real-cluster command to `moesim-cluster` as a
// whole (the same arguments) before doing any of its work, so a user sees one tool.
#pragma once

namespace moesim::harness {

// Called first by each real-cluster entry (cluster --platform exec, validate --cluster, cluster-server),
// before it prints or writes anything. In `moesim-cluster` (and a build without exec, where the entries
// refuse), it returns at once. In `moesim` it replaces the process by `moesim-cluster` from the same folder
// as the running executable, with the arguments this process was given; it returns never, and throws
// moesim::UsageError when that executable is missing (naming the path and the target that builds it) or
// moesim::Error when it cannot be started.
void enter_cluster_binary();

}  // namespace moesim::harness
