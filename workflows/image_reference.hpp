// Container image references (`image:` on tasks, services and in defaults) and pull policies,
// checked at load so a typo is a file:line:col error rather than a Pod stuck in ErrImagePull.
#pragma once

#include <string>

namespace chorus {

// Why `ref` is not a Docker/OCI image reference, or empty when it is one. The grammar is the
// distribution/reference one: [host[:port]/]path[:tag][@sha256:<64 hex>], where the path is
// components of [a-z0-9]+ joined by '.', '_', '__' or '-'+, separated by '/'; the first of
// several components is a registry host when it holds '.' or ':' or is "localhost"; a tag is
// [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}. The reason names the offending part ("the repository
// 'Busybox' must be lowercase"); callers prefix the image and where it was written.
std::string image_reference_problem(const std::string& ref);

// Whether `policy` is a Kubernetes imagePullPolicy: Always, IfNotPresent or Never.
bool is_image_pull_policy(const std::string& policy);

}  // namespace chorus
