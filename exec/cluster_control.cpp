#include "exec/cluster_control.h"

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "base/rng.h"
#include "exec/cluster_control.grpc.pb.h"
#include "kernels/bf16.h"
#include "kernels/expert_ffn.h"

namespace moesim::exec {
namespace {

void sleep_s(double s) {
  if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
}

std::vector<float> random_values(Rng& rng, uint64_t n) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.uniform() * 2 - 1);
  return v;
}

void fill_reply(const CallTiming& t, cluster::ControlReply* rep) {
  rep->set_received(t.received);
  rep->set_replied(monotonic_seconds());
  rep->set_start(t.start);
  rep->set_end(t.end);
  rep->set_peer_arrived(t.peer_arrived);
  rep->set_peer_sent(t.peer_sent);
  for (const auto& [a, b] : t.works) {
    auto* w = rep->add_work();
    w->set_start(a);
    w->set_end(b);
  }
}

grpc::Status status_of(const std::exception& e) {
  if (const auto* r = dynamic_cast<const RpcError*>(&e))
    return {static_cast<grpc::StatusCode>(r->code()), r->what()};
  return {grpc::StatusCode::INTERNAL, e.what()};
}

}  // namespace

class ControlService final : public cluster::ClusterControl::Service {
 public:
  ControlService(ExpertServer& experts, const ClusterControlOptions& opts) : experts_(experts), opts_(opts) {
    const ModelShape& shape = experts.weights().shape();
    for (const std::string& peer : opts.peers)
      peers_.push_back(std::make_unique<ExpertClient>(peer, opts.secret, experts.max_message_bytes()));
    Rng rng = Rng(opts.seed).split(0xD15E);
    dense_.resize(opts.dense_rows * opts.dense_cols);
    for (uint16_t& w : dense_) w = kernels::f32_to_bf16(static_cast<float>((rng.uniform() * 2 - 1) * 0.02));
    hidden_ = shape.hidden;
    units_ = experts.units();
    rng_ = Rng(opts.seed).split(0xAC7);
  }

  grpc::Status Dense(grpc::ServerContext* ctx, const cluster::DenseRequest* req,
                     cluster::ControlReply* rep) override {
    const double received = monotonic_seconds();
    if (grpc::Status s = admit(*ctx); !s.ok()) return s;
    if (grpc::Status s = validate(*req, units_, opts_.max_tokens); !s.ok()) return s;
    try {
      const uint32_t tokens = req->tokens();
      CallTiming t;
      t.received = received;
      std::tie(t.start, t.end) = experts_.run_on_unit(req->unit(), [&] {
        if (dense_.empty()) return;
        std::vector<float> x(static_cast<size_t>(tokens) * opts_.dense_cols, 0.5f);
        std::vector<float> y(static_cast<size_t>(tokens) * opts_.dense_rows);
        kernels::dense_gemm(dense_.data(), opts_.dense_rows, opts_.dense_cols, x.data(), y.data(), tokens);
      });
      fill_reply(t, rep);
      return grpc::Status::OK;
    } catch (const std::exception& e) {
      return {grpc::StatusCode::INVALID_ARGUMENT, e.what()};
    }
  }

  grpc::Status Invoke(grpc::ServerContext* ctx, const cluster::InvokeRequest* req,
                      cluster::ControlReply* rep) override {
    const double received = monotonic_seconds();
    if (grpc::Status s = admit(*ctx); !s.ok()) return s;
    if (grpc::Status s = validate(*req, experts_.weights().shape(), peers(), opts_.max_tokens); !s.ok())
      return s;
    ComputeCall call;
    call.request_id = req->request_id();
    call.layer = req->layer();
    uint64_t tokens = 0;
    for (const auto& w : req->work()) {
      call.works.push_back({w.expert(), w.gpu(), w.tokens()});
      tokens += w.tokens();
    }
    {
      std::lock_guard<std::mutex> lock(rng_mu_);
      call.activations = random_values(rng_, tokens * hidden_);
    }
    try {
      if (req->peer() == opts_.self) return local(call, received, rep);
      CallTiming t;
      t.received = received;
      t.start = monotonic_seconds();
      sleep_s(latency(req->peer()));
      const ComputeResult r = peers_[req->peer()]->compute(call);
      sleep_s(latency(req->peer()));
      t.end = monotonic_seconds();
      t.peer_arrived = r.arrived;
      t.peer_sent = r.sent;
      for (const auto& i : r.intervals) t.works.emplace_back(i.start, i.end);
      fill_reply(t, rep);
      return grpc::Status::OK;
    } catch (const std::exception& e) {
      return status_of(e);
    }
  }

  grpc::Status Push(grpc::ServerContext* ctx, const cluster::PushRequest* req,
                    cluster::ControlReply* rep) override {
    const double received = monotonic_seconds();
    if (grpc::Status s = admit(*ctx); !s.ok()) return s;
    if (grpc::Status s = validate(*req, experts_.weights().shape(), peers()); !s.ok()) return s;
    const std::shared_ptr<const ExpertTensors> w = experts_.weights().get(req->layer(), req->expert());
    if (!w)
      return {grpc::StatusCode::FAILED_PRECONDITION, "expert " + std::to_string(req->layer()) + ":" +
                                                         std::to_string(req->expert()) + " is not held here"};
    try {
      CallTiming t;
      t.received = received;
      t.start = monotonic_seconds();
      sleep_s(latency(req->peer()));
      peers_[req->peer()]->load_expert(req->layer(), req->expert(), *w);
      sleep_s(latency(req->peer()));
      t.end = monotonic_seconds();
      fill_reply(t, rep);
      return grpc::Status::OK;
    } catch (const std::exception& e) {
      return status_of(e);
    }
  }

  grpc::Status Shutdown(grpc::ServerContext* ctx, const cluster::ShutdownRequest*,
                        cluster::ShutdownReply*) override {
    if (grpc::Status s = admit(*ctx); !s.ok()) return s;
    if (opts_.on_shutdown) opts_.on_shutdown();
    return grpc::Status::OK;
  }

 private:
  grpc::Status admit(const grpc::ServerContext& ctx) const {
    if (carries_secret(ctx.client_metadata(), opts_.secret)) return grpc::Status::OK;
    return {grpc::StatusCode::UNAUTHENTICATED, std::string("missing or wrong ") + kSecretMetadataKey};
  }
  uint32_t peers() const { return static_cast<uint32_t>(peers_.size()); }
  // An invocation of this server's own experts: each work on its unit, in the units' FIFO, as its peers' are
  // (no network, no extra call).
  grpc::Status local(const ComputeCall& call, double received, cluster::ControlReply* rep) {
    const ModelShape& shape = experts_.weights().shape();
    CallTiming t;
    t.received = received;
    t.start = monotonic_seconds();
    const float* x = call.activations.data();
    for (const RemoteWork& w : call.works) {
      const std::shared_ptr<const ExpertTensors> e = experts_.weights().get(call.layer, w.expert);
      if (!e)
        return {grpc::StatusCode::FAILED_PRECONDITION, "work.expert: " + std::to_string(call.layer) + ":" +
                                                           std::to_string(w.expert) + " is not held here"};
      std::vector<float> y(static_cast<size_t>(w.tokens) * shape.hidden);
      t.works.push_back(experts_.run_on_unit(w.unit, [&] {
        kernels::expert_ffn(e->gate.data(), e->up.data(), e->down.data(), shape.hidden, shape.inter, x,
                            y.data(), w.tokens);
      }));
      x += static_cast<size_t>(w.tokens) * shape.hidden;
    }
    t.end = monotonic_seconds();
    fill_reply(t, rep);
    return grpc::Status::OK;
  }
  double latency(uint32_t peer) const {
    return peer < opts_.peer_latency_s.size() ? opts_.peer_latency_s[peer] : 0;
  }

  ExpertServer& experts_;
  const ClusterControlOptions& opts_;
  std::vector<std::unique_ptr<ExpertClient>> peers_;
  std::vector<uint16_t> dense_;
  uint64_t hidden_ = 0;
  uint32_t units_ = 1;
  std::mutex rng_mu_;
  Rng rng_{1};
};

struct ClusterControl::Impl {
  ClusterControlOptions opts;
  std::unique_ptr<ControlService> service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
  std::once_flag stopped;
};

ClusterControl::ClusterControl(ExpertServer& experts, ClusterControlOptions opts)
    : impl_(std::make_unique<Impl>()) {
  if (opts.secret.empty()) throw Error("cluster control: the shared secret must not be empty");
  impl_->opts = std::move(opts);
  impl_->service = std::make_unique<ControlService>(experts, impl_->opts);
  grpc::ServerBuilder b;
  b.AddListeningPort(impl_->opts.address, grpc::InsecureServerCredentials(), &impl_->port);
  b.RegisterService(impl_->service.get());
  b.SetMaxReceiveMessageSize(static_cast<int>(experts.max_message_bytes()));
  b.SetMaxSendMessageSize(static_cast<int>(experts.max_message_bytes()));
  b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  impl_->server = b.BuildAndStart();
  if (!impl_->server || impl_->port == 0)
    throw Error("cluster control: cannot listen on " + impl_->opts.address);
}

ClusterControl::~ClusterControl() {
  shutdown();
}

std::string ClusterControl::address() const {
  const std::string& a = impl_->opts.address;
  return a.substr(0, a.rfind(':')) + ":" + std::to_string(impl_->port);
}

void ClusterControl::shutdown() {
  std::call_once(impl_->stopped, [this] {
    if (impl_->server) impl_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  });
}

// ---- client ----

struct ClusterControlClient::Impl {
  std::string secret;
  std::unique_ptr<cluster::ClusterControl::Stub> stub;

  template <class Call>
  CallTiming call(const std::string& address, const char* method, double timeout_s, Call&& fn) const {
    grpc::ClientContext ctx;
    ctx.AddMetadata(kSecretMetadataKey, secret);
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::duration_cast<std::chrono::system_clock::duration>(
                         std::chrono::duration<double>(timeout_s)));
    cluster::ControlReply rep;
    const grpc::Status s = fn(&ctx, &rep);
    if (!s.ok())
      throw RpcError(static_cast<int>(s.error_code()), "cluster server " + address + ": " + method + ": " +
                                                           rpc_status_name(static_cast<int>(s.error_code())) +
                                                           ": " + s.error_message());
    CallTiming t;
    t.start = rep.start();
    t.end = rep.end();
    t.peer_arrived = rep.peer_arrived();
    t.peer_sent = rep.peer_sent();
    t.received = rep.received();
    t.replied = rep.replied();
    for (const auto& w : rep.work()) t.works.emplace_back(w.start(), w.end());
    return t;
  }
};

ClusterControlClient::ClusterControlClient(std::string address, std::string secret,
                                           uint64_t max_message_bytes)
    : address_(std::move(address)), impl_(std::make_unique<Impl>()) {
  if (secret.empty()) throw Error("cluster control client: the shared secret must not be empty");
  impl_->secret = std::move(secret);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(static_cast<int>(max_message_bytes));
  args.SetMaxSendMessageSize(static_cast<int>(max_message_bytes));
  impl_->stub = cluster::ClusterControl::NewStub(
      grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args));
}

ClusterControlClient::~ClusterControlClient() = default;

CallTiming ClusterControlClient::dense(uint32_t unit, uint32_t layer, uint32_t tokens, double timeout_s) {
  cluster::DenseRequest req;
  req.set_unit(unit);
  req.set_layer(layer);
  req.set_tokens(tokens);
  return impl_->call(address_, "Dense", timeout_s, [&](grpc::ClientContext* c, cluster::ControlReply* r) {
    return impl_->stub->Dense(c, req, r);
  });
}

CallTiming ClusterControlClient::invoke(uint32_t peer, uint32_t layer, const std::vector<RemoteWork>& works,
                                        double timeout_s) {
  cluster::InvokeRequest req;
  req.set_peer(peer);
  req.set_layer(layer);
  for (const RemoteWork& w : works) {
    auto* m = req.add_work();
    m->set_expert(w.expert);
    m->set_gpu(w.unit);
    m->set_tokens(w.tokens);
  }
  return impl_->call(address_, "Invoke", timeout_s, [&](grpc::ClientContext* c, cluster::ControlReply* r) {
    return impl_->stub->Invoke(c, req, r);
  });
}

CallTiming ClusterControlClient::push(uint32_t peer, uint32_t layer, uint32_t expert, double timeout_s) {
  cluster::PushRequest req;
  req.set_peer(peer);
  req.set_layer(layer);
  req.set_expert(expert);
  return impl_->call(address_, "Push", timeout_s, [&](grpc::ClientContext* c, cluster::ControlReply* r) {
    return impl_->stub->Push(c, req, r);
  });
}

void ClusterControlClient::shutdown_server(double timeout_s) {
  grpc::ClientContext ctx;
  ctx.AddMetadata(kSecretMetadataKey, impl_->secret);
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1e3)));
  cluster::ShutdownReply rep;
  const grpc::Status s = impl_->stub->Shutdown(&ctx, cluster::ShutdownRequest{}, &rep);
  if (!s.ok())
    throw RpcError(static_cast<int>(s.error_code()), "cluster server " + address_ + ": Shutdown: " +
                                                         rpc_status_name(static_cast<int>(s.error_code())) +
                                                         ": " + s.error_message());
}

}  // namespace moesim::exec
