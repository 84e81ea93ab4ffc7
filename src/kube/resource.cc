// Request paths for resources.
#include "kube/resource.h"

namespace tpu::kube {

std::string ResourceRef::Path(const std::string& ns, const std::string& name,
                              const std::string& subresource) const {
  std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (namespaced && !ns.empty()) p += "/namespaces/" + ns;
  p += "/" + resource;
  if (!name.empty()) p += "/" + name;
  if (!name.empty() && !subresource.empty()) p += "/" + subresource;
  return p;
}

}  // namespace tpu::kube
