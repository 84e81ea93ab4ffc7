// Body<T>: an action's resource body (model.h), with std::optional's interface
// over one heap allocation. A plan holds an Action per resource of the fleet,
// most of them noops that carry no body, and a NodePool alone is 1 KB inline:
// as optionals, the four bodies made every Action 2.6 KB whether it carried
// one or not; as Bodies they cost a pointer each when empty
// (docs/architecture.md, "The data between stages"). Copying a Body copies
// what it holds. Not thread-safe beyond what its T is.
#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace tpu::plan {

template <typename T>
class Body {
 public:
  Body() = default;
  Body(std::nullopt_t) {}  // NOLINT: as std::optional
  Body(const T& v) : p_(std::make_unique<T>(v)) {}  // NOLINT
  Body(T&& v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT
  Body(const std::optional<T>& v) : p_(v ? std::make_unique<T>(*v) : nullptr) {}  // NOLINT
  Body(const Body& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Body(Body&&) noexcept = default;

  Body& operator=(const Body& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Body& operator=(Body&&) noexcept = default;
  Body& operator=(std::nullopt_t) {
    p_.reset();
    return *this;
  }
  Body& operator=(const T& v) {
    p_ = std::make_unique<T>(v);
    return *this;
  }
  Body& operator=(T&& v) {
    p_ = std::make_unique<T>(std::move(v));
    return *this;
  }
  Body& operator=(const std::optional<T>& v) {
    p_ = v ? std::make_unique<T>(*v) : nullptr;
    return *this;
  }

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  // REQUIRES: has_value() (value() throws std::bad_optional_access otherwise).
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  T& value() {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  void reset() { p_.reset(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }

  friend bool operator==(const Body& a, const Body& b) {
    if (!a.p_ || !b.p_) return !a.p_ && !b.p_;
    return *a.p_ == *b.p_;
  }
  friend bool operator==(const Body& a, std::nullopt_t) { return !a.p_; }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace tpu::plan
