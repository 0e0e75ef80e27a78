#include "exec/expert_service.h"

#include <future>

#include <time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "base/error.h"
#include "base/rng.h"
#include "exec/cluster_rpc.grpc.pb.h"
#include "exec/store_reader.h"
#include "kernels/bf16.h"
#include "kernels/expert_ffn.h"

namespace moesim::exec {

double monotonic_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- weights -------------------------------------------------------------------------------------------

namespace {

std::string expert_label(uint32_t layer, uint32_t expert) {
  return "layer " + std::to_string(layer) + " expert " + std::to_string(expert);
}

std::vector<uint16_t> synth_tensor(const Rng& root, uint64_t index, uint64_t n, double sd) {
  Rng rng = root.split(index);
  std::vector<float> f(n);
  for (auto& v : f) v = static_cast<float>(rng.normal() * sd);
  std::vector<uint16_t> b(n);
  kernels::f32_to_bf16(f.data(), n, b.data());
  return b;
}

std::string shape_text(const std::vector<uint64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

ExpertWeights::ExpertWeights(const ModelShape& shape) : shape_(shape) { check_shape(shape); }

ExpertWeights::ExpertWeights(ExpertWeights&& other) noexcept : shape_(other.shape_) {
  const std::lock_guard lock(other.mu_);
  experts_ = std::move(other.experts_);
}

bool ExpertWeights::put(uint32_t layer, uint32_t expert, ExpertTensors t) {
  if (layer >= shape_.layers || expert >= shape_.experts)
    throw Error(expert_label(layer, expert) + ": out of range for a model of " + std::to_string(shape_.layers) +
                " layers and " + std::to_string(shape_.experts) + " experts");
  const uint64_t n = shape_.weight_elements();
  for (const auto& [name, v] : {std::pair{"gate", &t.gate}, std::pair{"up", &t.up}, std::pair{"down", &t.down}})
    if (v->size() != n)
      throw Error(expert_label(layer, expert) + ": " + name + " has " + std::to_string(v->size()) +
                  " values, expected " + std::to_string(n));
  auto p = std::make_shared<const ExpertTensors>(std::move(t));
  const std::lock_guard lock(mu_);
  auto [it, inserted] = experts_.insert_or_assign({layer, expert}, std::move(p));
  (void)it;
  return !inserted;
}

bool ExpertWeights::drop(uint32_t layer, uint32_t expert) {
  const std::lock_guard lock(mu_);
  return experts_.erase({layer, expert}) > 0;
}

std::shared_ptr<const ExpertTensors> ExpertWeights::get(uint32_t layer, uint32_t expert) const {
  const std::lock_guard lock(mu_);
  auto it = experts_.find({layer, expert});
  return it == experts_.end() ? nullptr : it->second;
}

std::vector<ExpertKey> ExpertWeights::held() const {
  const std::lock_guard lock(mu_);
  std::vector<ExpertKey> out;
  for (const auto& [k, v] : experts_) out.push_back(k);
  return out;
}

ExpertWeights synth_expert_weights(const ModelShape& shape, const std::vector<ExpertKey>& experts, uint64_t seed,
                                   double std) {
  if (!(std > 0)) throw Error("synthetic expert weights: std must be > 0");
  ExpertWeights w(shape);
  const Rng root(seed);
  const uint64_t n = shape.weight_elements();
  for (const auto& [layer, expert] : experts) {
    const uint64_t first = (uint64_t{layer} * shape.experts + expert) * 3;
    w.put(layer, expert, {synth_tensor(root, first, n, std), synth_tensor(root, first + 1, n, std),
                          synth_tensor(root, first + 2, n, std)});
  }
  return w;
}

ExpertWeights store_expert_weights(const std::string& store_path, const ModelShape& shape,
                                   const std::vector<ExpertKey>& experts) {
  ExpertWeights w(shape);
  const StoreReader reader(store_path);
  const std::vector<uint64_t> in_shape{shape.inter, shape.hidden}, out_shape{shape.hidden, shape.inter};
  auto read = [&](uint32_t layer, uint32_t expert, const char* role, const std::vector<uint64_t>& want) {
    const StoreEntry* e = reader.find(layer, expert, role);
    if (!e) throw Error(store_path + ": " + expert_label(layer, expert) + " has no " + role + " tensor");
    if (e->shape != want)
      throw Error(store_path + ": " + e->label() + ": shape " + shape_text(e->shape) + ", the model's is " +
                  shape_text(want));
    std::vector<uint16_t> v(e->elements);
    reader.recover(*e, v.data());
    return v;
  };
  for (const auto& [layer, expert] : experts)
    w.put(layer, expert, {read(layer, expert, "gate_proj", in_shape), read(layer, expert, "up_proj", in_shape),
                          read(layer, expert, "down_proj", out_shape)});
  return w;
}

// ---- units: one worker thread and FIFO queue per "gpu" ------------------------------------------------------

namespace {

class Units {
 public:
  explicit Units(uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) units_.push_back(std::make_unique<Unit>());
    for (auto& u : units_) u->thread = std::thread([p = u.get()] { run(*p); });
  }
  ~Units() { stop(); }
  void push(uint32_t unit, std::function<void()> task) {
    Unit& u = *units_.at(unit);
    {
      const std::lock_guard lock(u.mu);
      u.queue.push_back(std::move(task));
    }
    u.cv.notify_one();
  }
  // Runs what is queued, then joins: a call in flight still gets its reply.
  void stop() {
    for (auto& u : units_) {
      {
        const std::lock_guard lock(u->mu);
        u->stop = true;
      }
      u->cv.notify_one();
    }
    for (auto& u : units_)
      if (u->thread.joinable()) u->thread.join();
  }

 private:
  struct Unit {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool stop = false;
    std::thread thread;
  };
  static void run(Unit& u) {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(u.mu);
        u.cv.wait(lock, [&] { return u.stop || !u.queue.empty(); });
        if (u.queue.empty()) return;
        task = std::move(u.queue.front());
        u.queue.pop_front();
      }
      task();
    }
  }
  std::vector<std::unique_ptr<Unit>> units_;
};

// One Compute call in flight: the last of its works to finish sends the reply.
struct ComputeJob {
  grpc::ServerUnaryReactor* reactor = nullptr;
  cluster::ComputeReply* reply = nullptr;
  std::atomic<int> remaining{0};
  std::mutex mu;
  std::string error;  // the first work's failure, sent as INTERNAL
  void done() {
    if (remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    reply->set_sent(monotonic_seconds());
    reactor->Finish(error.empty() ? grpc::Status::OK : grpc::Status(grpc::StatusCode::INTERNAL, error));
  }
};

}  // namespace

// ---- the service ----------------------------------------------------------------------------------------

namespace {

class Service final : public cluster::ExpertService::CallbackService {
 public:
  Service(ExpertWeights& weights, const ExpertServerOptions& opts, uint64_t max_bytes, Units& units)
      : weights_(weights), opts_(opts), max_bytes_(max_bytes), units_(units) {}

  grpc::ServerUnaryReactor* Compute(grpc::CallbackServerContext* ctx, const cluster::ComputeRequest* req,
                                    cluster::ComputeReply* rep) override {
    const double arrived = monotonic_seconds();
    auto* reactor = ctx->DefaultReactor();
    grpc::Status s = authorize(*ctx);
    if (s.ok())
      s = validate(*req, weights_.shape(), opts_.units, opts_.max_tokens,
                   [&](uint32_t l, uint32_t e) { return weights_.get(l, e) != nullptr; });
    std::vector<std::shared_ptr<const ExpertTensors>> tensors;
    for (int i = 0; s.ok() && i < req->work_size(); ++i) {
      tensors.push_back(weights_.get(req->layer(), req->work(i).expert()));
      if (!tensors.back())  // dropped since validate() looked
        s = {grpc::StatusCode::FAILED_PRECONDITION, "work[" + std::to_string(i) + "].expert: " +
                                                        expert_label(req->layer(), req->work(i).expert()) +
                                                        " is not held by this server"};
    }
    if (!s.ok()) {
      reactor->Finish(s);
      return reactor;
    }
    rep->set_request_id(req->request_id());
    rep->set_arrived(arrived);
    dispatch(*req, rep, std::move(tensors), reactor);
    return reactor;
  }

  grpc::ServerUnaryReactor* LoadExpert(grpc::CallbackServerContext* ctx, const cluster::LoadRequest* req,
                                       cluster::LoadReply* rep) override {
    auto* reactor = ctx->DefaultReactor();
    grpc::Status s = authorize(*ctx);
    if (s.ok()) s = validate(*req, weights_.shape());
    if (s.ok())
      rep->set_replaced(weights_.put(req->layer(), req->expert(),
                                     {to_bf16(req->gate()), to_bf16(req->up()), to_bf16(req->down())}));
    reactor->Finish(s);
    return reactor;
  }

  grpc::ServerUnaryReactor* DropExpert(grpc::CallbackServerContext* ctx, const cluster::DropRequest* req,
                                       cluster::DropReply* rep) override {
    auto* reactor = ctx->DefaultReactor();
    grpc::Status s = authorize(*ctx);
    if (s.ok()) s = validate(*req, weights_.shape());
    if (s.ok()) rep->set_dropped(weights_.drop(req->layer(), req->expert()));
    reactor->Finish(s);
    return reactor;
  }

  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* ctx, const cluster::PingRequest*,
                                 cluster::PingReply* rep) override {
    auto* reactor = ctx->DefaultReactor();
    const grpc::Status s = authorize(*ctx);
    if (s.ok()) {
      const ModelShape& m = weights_.shape();
      rep->set_layers(m.layers);
      rep->set_experts(m.experts);
      rep->set_hidden(m.hidden);
      rep->set_inter(m.inter);
      rep->set_units(opts_.units);
      rep->set_max_tokens(opts_.max_tokens);
      rep->set_max_message_bytes(max_bytes_);
    }
    reactor->Finish(s);
    return reactor;
  }

 private:
  ExpertWeights& weights_;
  const ExpertServerOptions& opts_;
  uint64_t max_bytes_;
  Units& units_;

  grpc::Status authorize(const grpc::CallbackServerContext& ctx) const {
    if (carries_secret(ctx.client_metadata(), opts_.secret)) return grpc::Status::OK;
    return {grpc::StatusCode::UNAUTHENTICATED, std::string("missing or wrong ") + kSecretMetadataKey};
  }

  static std::vector<uint16_t> to_bf16(const std::string& bytes) {
    std::vector<uint16_t> v(bytes.size() / 2);
    std::memcpy(v.data(), bytes.data(), v.size() * 2);
    return v;
  }

  // Queues each work on its unit; the works' outputs land in disjoint ranges of the reply's buffer, and each
  // work writes only its own timing, so the units need no lock between them.
  void dispatch(const cluster::ComputeRequest& req, cluster::ComputeReply* rep,
                std::vector<std::shared_ptr<const ExpertTensors>> tensors, grpc::ServerUnaryReactor* reactor) {
    const uint32_t hidden = weights_.shape().hidden, inter = weights_.shape().inter;
    std::string& outputs = *rep->mutable_outputs();  // sized once: the units write into it while works are queued
    outputs.resize(req.activations().size());
    auto job = std::make_shared<ComputeJob>();
    job->reactor = reactor;
    job->reply = rep;
    job->remaining = req.work_size();
    uint64_t row = 0;
    for (int i = 0; i < req.work_size(); ++i) {
      const auto& w = req.work(i);
      const uint64_t offset = row * hidden * 4, bytes = uint64_t{w.tokens()} * hidden * 4;
      row += w.tokens();
      cluster::WorkTiming* timing = rep->add_timing();
      units_.push(w.gpu(), [this, job, timing, unit = w.gpu(), tokens = w.tokens(), hidden, inter,
                            in = req.activations().data() + offset, out = outputs.data() + offset,
                            bytes, t = std::move(tensors[static_cast<size_t>(i)])] {
        timing->set_start(monotonic_seconds());
        if (opts_.before_compute) opts_.before_compute(unit);
        try {
          // Copies: the message's bytes carry no float alignment.
          std::vector<float> x(bytes / 4), y(bytes / 4);
          std::memcpy(x.data(), in, bytes);
          kernels::expert_ffn(t->gate.data(), t->up.data(), t->down.data(), hidden, inter, x.data(), y.data(),
                              tokens);
          std::memcpy(out, y.data(), bytes);
        } catch (const std::exception& e) {
          const std::lock_guard lock(job->mu);
          if (job->error.empty()) job->error = e.what();
        }
        timing->set_end(monotonic_seconds());
        job->done();
      });
    }
  }
};

std::string host_of(const std::string& address) {
  const auto colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

}  // namespace

// ---- the server -----------------------------------------------------------------------------------------

struct ExpertServer::Impl {
  ExpertWeights weights;
  ExpertServerOptions opts;
  uint64_t max_bytes = 0;
  int port = 0;
  Units units;
  Service service;
  std::unique_ptr<grpc::Server> server;
  std::mutex mu;
  bool stopped = false;

  Impl(ExpertWeights w, ExpertServerOptions o)
      : weights(std::move(w)),
        opts(std::move(o)),
        max_bytes(exec::max_message_bytes(weights.shape(), opts.max_tokens)),
        units(opts.units),
        service(weights, opts, max_bytes, units) {}
};

ExpertServer::ExpertServer(ExpertWeights weights, ExpertServerOptions opts) {
  if (opts.secret.empty()) throw Error("expert server: the shared secret must not be empty");
  if (opts.units == 0) throw Error("expert server: units must be > 0");
  if (opts.max_tokens == 0) throw Error("expert server: max_tokens must be > 0");
  if (opts.max_streams == 0 || opts.max_streams > 65536)
    throw Error("expert server: max_streams must be in [1, 65536]");
  if (opts.address.empty()) throw Error("expert server: no address to listen on");
  impl_ = std::make_unique<Impl>(std::move(weights), std::move(opts));
  grpc::ServerBuilder b;
  b.AddListeningPort(impl_->opts.address, grpc::InsecureServerCredentials(), &impl_->port);
  b.RegisterService(&impl_->service);
  b.SetMaxReceiveMessageSize(static_cast<int>(impl_->max_bytes));
  b.SetMaxSendMessageSize(static_cast<int>(impl_->max_bytes));
  // No other process may bind the same port and take a share of the peers' connections.
  b.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  b.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, static_cast<int>(impl_->opts.max_streams));
  impl_->server = b.BuildAndStart();
  if (!impl_->server || impl_->port == 0)
    throw Error("expert server: cannot listen on " + impl_->opts.address);
}

ExpertServer::~ExpertServer() { shutdown(); }

int ExpertServer::port() const { return impl_->port; }
std::string ExpertServer::address() const { return host_of(impl_->opts.address) + ":" + std::to_string(port()); }
uint64_t ExpertServer::max_message_bytes() const { return impl_->max_bytes; }
uint32_t ExpertServer::units() const { return impl_->opts.units; }
const ExpertWeights& ExpertServer::weights() const { return impl_->weights; }

std::pair<double, double> ExpertServer::run_on_unit(uint32_t unit, const std::function<void()>& task) {
  if (unit >= impl_->opts.units)
    throw Error("expert server: unit " + std::to_string(unit) + " >= " + std::to_string(impl_->opts.units) + " units");
  std::promise<std::pair<double, double>> done;
  std::future<std::pair<double, double>> result = done.get_future();
  impl_->units.push(unit, [&] {
    const double start = monotonic_seconds();
    try {
      task();
      done.set_value({start, monotonic_seconds()});
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  return result.get();
}

void ExpertServer::wait() {
  if (impl_->server) impl_->server->Wait();
}

void ExpertServer::shutdown() {
  {
    const std::lock_guard lock(impl_->mu);
    if (impl_->stopped) return;
    impl_->stopped = true;
  }
  // The server first: Shutdown waits for the callbacks in flight, which the units still complete.
  if (impl_->server) impl_->server->Shutdown();
  impl_->units.stop();
}

}  // namespace moesim::exec
