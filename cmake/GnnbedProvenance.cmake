# Results record the git revision they were produced by. The revision is re-read at every build,
# and the generated source is rewritten only when it changes, so builds stay incremental.
set(GNNBED_REVISION_SOURCE "${CMAKE_BINARY_DIR}/generated/git_revision.cpp")
add_custom_target(gnnbed_git_revision
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DOUTPUT=${GNNBED_REVISION_SOURCE}
          -P ${CMAKE_CURRENT_LIST_DIR}/WriteGitRevision.cmake
  BYPRODUCTS ${GNNBED_REVISION_SOURCE}
  COMMENT "Reading the git revision"
  VERBATIM)
