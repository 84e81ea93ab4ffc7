// spec.changeWindows of a Cluster: each window read and compiled here, so a
// bad schedule, time zone or range is an error at its line, never a window
// that silently never opens.
#include <string>
#include <vector>

#include "base/change_windows.h"
#include "manifest/decode_util.h"

namespace tpu::manifest {

void DecodeChangeWindows(DocReader& r, const YamlNode* spec, std::vector<ChangeWindow>* out) {
  const YamlNode* list = r.Node(spec, "changeWindows");
  if (!list || list->type != YamlNode::Type::kSeq || r.Bad("spec.changeWindows")) return;
  const YamlDocument& d = r.doc();
  for (size_t i = 0; i < d.size(*list); ++i) {
    const YamlNode& item = d.item(*list, i);
    if (item.type != YamlNode::Type::kMap) continue;  // the schema reported it
    const std::string field = "spec.changeWindows[" + std::to_string(i) + "]";
    ChangeWindow w;
    w.where.line = item.line;
    w.where.column = item.column;
    w.allow = r.Str(&item, "kind").value_or("allow") != "deny";
    w.schedule = r.Str(&item, "schedule").value_or("");
    w.time_zone = r.Str(&item, "timeZone").value_or("UTC");
    w.start = r.Str(&item, "start").value_or("");
    w.end = r.Str(&item, "end").value_or("");
    const bool cron = !w.schedule.empty();
    if (cron == (!w.start.empty() || !w.end.empty())) {
      r.ErrorAt(item, field, "expected either schedule (with duration) or start and end");
      continue;
    }
    if (cron) {
      auto dur = r.Str(&item, "duration");
      auto secs = dur ? ParseDurationSeconds(*dur) : std::nullopt;
      if (!secs) {
        r.Error(&item, dur ? "duration" : "schedule", field + ".duration",
                dur ? "expected a duration such as 2h or 1h30m, got " + *dur
                    : "required field is missing (how long the window stays open after each time the schedule fires)");
        continue;
      }
      w.duration_seconds = *secs;
    }
    WindowSpec spec{w.allow, w.schedule, w.duration_seconds, w.time_zone, w.start, w.end};
    auto compiled = ChangeWindows::Compile({spec});
    if (!compiled.ok()) {
      // "changeWindows[0]: schedule: cron hour: invalid …" → the key it names.
      std::string msg = compiled.status().message();
      msg = msg.substr(msg.find(": ") + 2);
      std::string key = msg.substr(0, msg.find(':'));
      r.Error(&item, key.c_str(), field + "." + key, msg.substr(msg.find(": ") + 2));
      continue;
    }
    out->push_back(std::move(w));
  }
}

}  // namespace tpu::manifest
