// Copyright: the ste authors. Error-propagation helpers over absl::Status.
//
// Debian's abseil 20220623 ships no status_macros.h, so the two macros the
// codebase uses are defined once, here.
#ifndef STE_STATUS_MACROS_H_
#define STE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define STE_CONCAT_INNER_(a, b) a##b
#define STE_CONCAT_(a, b) STE_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status); returns it from the enclosing
// function when it is not OK.
#define STE_RETURN_IF_ERROR(expr)                       \
  do {                                                  \
    ::absl::Status ste_status_ = (expr);                \
    if (!ste_status_.ok()) return ste_status_;          \
  } while (0)

// `STE_ASSIGN_OR_RETURN(auto x, FnReturningStatusOr())`: binds the value,
// or returns the error from the enclosing function.
#define STE_ASSIGN_OR_RETURN(lhs, expr) \
  STE_ASSIGN_OR_RETURN_IMPL_(STE_CONCAT_(ste_statusor_, __LINE__), lhs, expr)
#define STE_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

#endif  // STE_STATUS_MACROS_H_
