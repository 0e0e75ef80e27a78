#include "exec/expert_client.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstring>
#include <limits>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "exec/cluster_rpc.grpc.pb.h"

namespace moesim::exec {
namespace {

std::chrono::system_clock::time_point deadline_after(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds));
}

std::string bytes_of(const void* p, size_t n) { return {static_cast<const char*>(p), n}; }

cluster::ComputeRequest request_of(const ComputeCall& call) {
  cluster::ComputeRequest req;
  req.set_request_id(call.request_id);
  req.set_layer(call.layer);
  for (const auto& w : call.works) {
    auto* m = req.add_work();
    m->set_expert(w.expert);
    m->set_gpu(w.unit);
    m->set_tokens(w.tokens);
  }
  req.set_activations(bytes_of(call.activations.data(), call.activations.size() * sizeof(float)));
  return req;
}

ComputeResult result_of(const cluster::ComputeReply& rep) {
  ComputeResult r;
  r.request_id = rep.request_id();
  r.outputs.resize(rep.outputs().size() / sizeof(float));
  std::memcpy(r.outputs.data(), rep.outputs().data(), r.outputs.size() * sizeof(float));
  for (const auto& t : rep.timing()) r.intervals.push_back({t.start(), t.end()});
  r.arrived = rep.arrived();
  r.sent = rep.sent();
  return r;
}

}  // namespace

const char* rpc_status_name(int code) {
  switch (static_cast<grpc::StatusCode>(code)) {
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "error";
  }
}

struct ExpertClient::Impl {
  std::string secret;
  std::unique_ptr<cluster::ExpertService::Stub> stub;
  // Asynchronous calls whose state (holding a reference to the channel) is not destroyed yet.
  std::mutex mu;
  std::condition_variable cv;
  uint64_t in_flight = 0;

  void prepare(grpc::ClientContext& ctx, double timeout_s) const {
    ctx.AddMetadata(kSecretMetadataKey, secret);
    ctx.set_deadline(deadline_after(timeout_s));
  }
  // A blocking call: `call(ctx, reply)` sends the request.
  template <class Reply, class Call>
  Reply unary(const std::string& address, const char* method, double timeout_s, Call&& call) const {
    Reply rep;
    grpc::ClientContext ctx;
    prepare(ctx, timeout_s);
    const grpc::Status s = call(&ctx, &rep);
    if (!s.ok()) throw error(address, method, s);
    return rep;
  }
  static RpcError error(const std::string& address, const char* method, const grpc::Status& s) {
    return {static_cast<int>(s.error_code()), "expert server " + address + ": " + method + ": " +
                                                  rpc_status_name(static_cast<int>(s.error_code())) + ": " + s.error_message()};
  }
};

ExpertClient::ExpertClient(std::string address, std::string secret, uint64_t max_message_bytes)
    : address_(std::move(address)), impl_(std::make_unique<Impl>()) {
  if (secret.empty()) throw Error("expert client for " + address_ + ": the shared secret must not be empty");
  if (max_message_bytes == 0 || max_message_bytes > static_cast<uint64_t>(std::numeric_limits<int>::max()))
    throw Error("expert client for " + address_ + ": max message bytes " + std::to_string(max_message_bytes) +
                " must be in (0, 2 GiB)");
  impl_->secret = std::move(secret);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  impl_->stub = cluster::ExpertService::NewStub(
      grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args));
}

// A call's ClientContext holds a reference to the channel, and gRPC destroys the call's callback (and with it
// the context) on one of its own threads. Were that the channel's last reference, the channel would release
// gRPC's shared callback queue from one of that queue's threads, which joins itself and frees the queue twice
// (found under ASan). So the client outlives every call's state: the channel's last reference is dropped here.
ExpertClient::~ExpertClient() {
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return impl_->in_flight == 0; });
}

std::future<ComputeResult> ExpertClient::compute_async(const ComputeCall& call, double timeout_s) {
  // What the call needs lives until its callback, which gRPC runs on its own thread.
  struct Call {
    explicit Call(Impl* impl) : release{impl} {}
    struct Release {  // the first member, so destroyed last: after the context let go of the channel
      Impl* impl;
      ~Release() {
        const std::lock_guard lock(impl->mu);
        --impl->in_flight;
        impl->cv.notify_all();
      }
    } release;
    grpc::ClientContext ctx;
    cluster::ComputeRequest req;
    cluster::ComputeReply rep;
    std::promise<ComputeResult> promise;
  };
  {
    const std::lock_guard lock(impl_->mu);
    ++impl_->in_flight;
  }
  auto c = std::make_shared<Call>(impl_.get());
  c->req = request_of(call);
  impl_->prepare(c->ctx, timeout_s);
  auto future = c->promise.get_future();
  impl_->stub->async()->Compute(&c->ctx, &c->req, &c->rep, [address = address_, c](grpc::Status s) {
    if (s.ok())
      c->promise.set_value(result_of(c->rep));
    else
      c->promise.set_exception(std::make_exception_ptr(Impl::error(address, "Compute", s)));
  });
  return future;
}

ComputeResult ExpertClient::compute(const ComputeCall& call, double timeout_s) {
  return compute_async(call, timeout_s).get();
}

bool ExpertClient::load_expert(uint32_t layer, uint32_t expert, const ExpertTensors& t, double timeout_s) {
  cluster::LoadRequest req;
  req.set_layer(layer);
  req.set_expert(expert);
  req.set_gate(bytes_of(t.gate.data(), t.gate.size() * 2));
  req.set_up(bytes_of(t.up.data(), t.up.size() * 2));
  req.set_down(bytes_of(t.down.data(), t.down.size() * 2));
  return impl_->unary<cluster::LoadReply>(address_, "LoadExpert", timeout_s, [&](auto* ctx, auto* rep) {
           return impl_->stub->LoadExpert(ctx, req, rep);
         }).replaced();
}

bool ExpertClient::drop_expert(uint32_t layer, uint32_t expert, double timeout_s) {
  cluster::DropRequest req;
  req.set_layer(layer);
  req.set_expert(expert);
  return impl_->unary<cluster::DropReply>(address_, "DropExpert", timeout_s, [&](auto* ctx, auto* rep) {
           return impl_->stub->DropExpert(ctx, req, rep);
         }).dropped();
}

cluster::PingReply ExpertClient::ping(double deadline_s) {
  const auto end = deadline_after(deadline_s);
  for (;;) {
    grpc::ClientContext ctx;
    ctx.AddMetadata(kSecretMetadataKey, impl_->secret);
    ctx.set_deadline(std::min(end, deadline_after(1.0)));
    ctx.set_wait_for_ready(true);  // a server not listening yet is waited for, not an error
    cluster::PingReply rep;
    const grpc::Status s = impl_->stub->Ping(&ctx, cluster::PingRequest(), &rep);
    if (s.ok()) return rep;
    if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED || std::chrono::system_clock::now() >= end)
      throw impl_->error(address_, "Ping", s);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace moesim::exec
