// Scores and the margin ranking loss of a chunk (ranking_loss.hpp). The products are BLAS
// matrix products: a chunk is 50 queries against 100 candidates, so three small GEMMs.
#include "exec/embedding/ranking_loss.hpp"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "workloads/common/json_config.hpp"

namespace gnnbed {
namespace {

// Below this distance the gradient of -||q - x|| (a unit vector) is taken as zero, as at q = x.
constexpr float kSmallestDistance = 1e-12f;

float squared_norm(const float* row, int dimension) {
  float sum = 0;
  for (int j = 0; j < dimension; ++j) sum += row[j] * row[j];
  return sum;
}

// out (rows x dimension) = weights (rows x inner) . values (inner x dimension), or with the
// weights transposed (weights stored inner x rows).
void weighted_sum(bool transpose_weights, const float* weights, int rows, int inner,
                  const float* values, int dimension, float* out) {
  cblas_sgemm(CblasRowMajor, transpose_weights ? CblasTrans : CblasNoTrans, CblasNoTrans, rows,
              dimension, inner, 1.0f, weights, transpose_weights ? rows : inner, values, dimension,
              0.0f, out, dimension);
}

// out -= diag(scale) . rows: the part of -||q - x||'s gradient along the row itself.
void subtract_scaled_rows(const std::vector<float>& scale, const float* rows, int dimension,
                          float* out) {
  for (std::size_t i = 0; i < scale.size(); ++i) {
    for (int j = 0; j < dimension; ++j) {
      out[i * static_cast<std::size_t>(dimension) + static_cast<std::size_t>(j)] -=
          scale[i] * rows[i * static_cast<std::size_t>(dimension) + static_cast<std::size_t>(j)];
    }
  }
}

}  // namespace

Scoring scoring_from_name(const std::string& name) {
  require_one_of("model.scoring", name, {"dot", "translation"});
  return name == "dot" ? Scoring::dot : Scoring::translation;
}

void pairwise_scores(Scoring scoring, const float* queries, int num_queries,
                     const float* candidates, int num_candidates, int dimension, float* scores) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, num_queries, num_candidates, dimension, 1.0f,
              queries, dimension, candidates, dimension, 0.0f, scores, num_candidates);
  if (scoring == Scoring::dot) return;
  std::vector<float> candidate_norms(static_cast<std::size_t>(num_candidates));
  for (int n = 0; n < num_candidates; ++n) {
    candidate_norms[static_cast<std::size_t>(n)] =
        squared_norm(candidates + static_cast<std::ptrdiff_t>(n) * dimension, dimension);
  }
  for (int i = 0; i < num_queries; ++i) {
    const float query_norm =
        squared_norm(queries + static_cast<std::ptrdiff_t>(i) * dimension, dimension);
    float* row = scores + static_cast<std::ptrdiff_t>(i) * num_candidates;
    for (int n = 0; n < num_candidates; ++n) {
      const float squared = query_norm + candidate_norms[static_cast<std::size_t>(n)] - 2 * row[n];
      row[n] = -std::sqrt(std::max(squared, 0.0f));
    }
  }
}

double ranking_loss(Scoring scoring, const float* queries, int num_queries, const float* candidates,
                    int num_candidates, int dimension, double margin, float* query_gradient,
                    float* candidate_gradient) {
  const auto c = static_cast<std::size_t>(num_queries);
  const auto n_all = static_cast<std::size_t>(num_candidates);
  std::vector<float> scores(c * n_all);
  pairwise_scores(scoring, queries, num_queries, candidates, num_candidates, dimension,
                  scores.data());
  // weights = d loss / d scores.
  std::vector<float> weights(c * n_all, 0.0f);
  double loss = 0;
  for (std::size_t i = 0; i < c; ++i) {
    const float positive = scores[i * n_all + i];
    for (std::size_t n = 0; n < n_all; ++n) {
      const double violation = margin - positive + scores[i * n_all + n];
      if (n == i || violation <= 0) continue;
      loss += violation;
      weights[i * n_all + n] = 1.0f;
      weights[i * n_all + i] -= 1.0f;
    }
  }
  // d f / d q = (x - q) / ||q - x|| and d f / d x = (q - x) / ||q - x|| for translation: the
  // weights scaled by the inverse distance, plus the parts along q and x themselves.
  std::vector<float> query_scale(c, 0.0f);
  std::vector<float> candidate_scale(n_all, 0.0f);
  if (scoring == Scoring::translation) {
    for (std::size_t i = 0; i < c; ++i) {
      for (std::size_t n = 0; n < n_all; ++n) {
        const float distance = -scores[i * n_all + n];
        float& w = weights[i * n_all + n];
        w = distance > kSmallestDistance ? w / distance : 0.0f;
        query_scale[i] += w;
        candidate_scale[n] += w;
      }
    }
  }
  weighted_sum(false, weights.data(), num_queries, num_candidates, candidates, dimension,
               query_gradient);
  weighted_sum(true, weights.data(), num_candidates, num_queries, queries, dimension,
               candidate_gradient);
  if (scoring == Scoring::translation) {
    subtract_scaled_rows(query_scale, queries, dimension, query_gradient);
    subtract_scaled_rows(candidate_scale, candidates, dimension, candidate_gradient);
  }
  return loss;
}

}  // namespace gnnbed
