#pragma once
// Small dense least-squares fits: the cost model's (sim/cost_model/cost_fit.hpp) and ROC's
// partition cost model's (strategies/partition_costs.hpp), a handful of columns each.
#include <optional>
#include <span>
#include <vector>

namespace gnnbed {

using Column = std::vector<double>;

double norm(const Column& column);
// The distance between the directions of a and b (their unit vectors); both non-zero.
double distance_between_directions(const Column& a, const Column& b);

// min ||A x - b|| by Householder QR, A given by columns of unit norm; nothing when the columns are
// linearly dependent.
std::optional<std::vector<double>> least_squares(std::vector<Column> a, std::vector<double> b);

// min ||A x - b|| subject to x >= 0, for a handful of columns of unit norm.
std::vector<double> non_negative_least_squares(const std::vector<Column>& a,
                                               const std::vector<double>& b);

// The same for columns of any norm (every subset of them is tried); a column of zeros gets 0.
// Throws Error when a column's length differs from the targets'.
std::vector<double> fit_non_negative(std::span<const std::vector<double>> columns,
                                     std::span<const double> targets);

}  // namespace gnnbed
