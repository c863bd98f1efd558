// libFuzzer target: the agent message decoder. Every payload goes through message_type() and
// every decode_* (a hostile peer picks the type byte, so each decoder must hold on any body).
// A payload a decoder accepts must also survive a round trip: encoding what was decoded and
// decoding that again gives the same encoding (the decoder read exactly what the encoder wrote).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/agent/agent_protocol.hpp"

namespace {

using namespace chorus;

void single_messages(std::string_view p) {
  AgentHello hello;
  if (decode_hello(p, hello)) {
    AgentHello again;
    std::string first = encode_hello(hello);
    if (!decode_hello(first, again)) std::abort();   // our own encoding was refused
    if (encode_hello(again) != first) std::abort();  // decode(encode(x)) != x
  }
  AgentWelcome welcome;
  if (decode_welcome(p, welcome)) {
    AgentWelcome again;
    if (!decode_welcome(encode_welcome(welcome), again)) std::abort();
    if (encode_welcome(again) != encode_welcome(welcome)) std::abort();
  }
  std::string reason;
  if (decode_refused(p, reason)) {
    std::string again;
    if (!decode_refused(encode_refused(reason), again) || again != reason) std::abort();
  }
  FetchRequest fetch;
  if (decode_fetch(p, fetch)) {
    FetchRequest again;
    std::string first = encode_fetch(AgentMessage::fetch, fetch);
    if (!decode_fetch(first, again)) std::abort();
    if (encode_fetch(AgentMessage::fetch, again) != first) std::abort();
  }
  FetchReply fetched;
  if (decode_fetched(p, fetched)) {
    FetchReply again;
    std::string first = encode_fetched(fetched);
    if (!decode_fetched(first, again)) std::abort();
    if (encode_fetched(again) != first) std::abort();
  }
  AgentTelemetry telemetry;
  if (decode_telemetry(p, telemetry)) {
    AgentTelemetry again;
    std::string first = encode_telemetry(telemetry);
    if (!decode_telemetry(first, again)) std::abort();
    if (encode_telemetry(again) != first) std::abort();
  }
  ProbeTargets targets;
  if (decode_probe_targets(p, targets)) {
    ProbeTargets again;
    std::string first = encode_probe_targets(targets.generation, targets.sources);
    if (!decode_probe_targets(first, again)) std::abort();
    if (encode_probe_targets(again.generation, again.sources) != first) std::abort();
  }
  OutputChunk chunk;
  if (decode_output(p, chunk)) {
    OutputChunk again;
    std::string first = encode_output(chunk);
    if (!decode_output(first, again)) std::abort();
    if (encode_output(again) != first) std::abort();
  }
}

template <typename Record, typename Decode, typename Append>
void batch(std::string_view p, AgentMessage type, Decode decode, Append append) {
  std::vector<Record> records;
  if (!decode(p, records)) return;
  std::string first;
  begin_batch(first, type);
  for (const auto& r : records) append(first, r);
  std::vector<Record> again;
  if (!decode(first, again) || again.size() != records.size()) std::abort();
  std::string second;
  begin_batch(second, type);
  for (const auto& r : again) append(second, r);
  if (second != first) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view p(reinterpret_cast<const char*>(data), size);
  (void)message_type(p);
  single_messages(p);
  batch<TaskLaunch>(p, AgentMessage::launch, decode_launches,
                    [](std::string& b, const TaskLaunch& l) { append_launch(b, l); });
  batch<StateUpdate>(p, AgentMessage::updates, decode_updates, append_update);
  batch<TaskRef>(p, AgentMessage::cancel, decode_task_refs, append_task_ref);
  return 0;
}
