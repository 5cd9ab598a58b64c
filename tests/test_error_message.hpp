// For tests that check what a user error names: the message of the
// crema::Error an action throws.
#ifndef CREMA_TESTS_TEST_ERROR_MESSAGE_HPP_
#define CREMA_TESTS_TEST_ERROR_MESSAGE_HPP_

#include <functional>
#include <string>

#include "crema/common.hpp"

namespace crema {

// "" when the action throws no Error.
inline std::string ErrorMessageOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

}  // namespace crema

#endif  // CREMA_TESTS_TEST_ERROR_MESSAGE_HPP_
