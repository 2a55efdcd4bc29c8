//! Scenarios (spec section 10): parser and runner. Work in progress.
