# One interface target carries the project's warning policy; every gnnbed target links it.
add_library(gnnbed_warnings INTERFACE)
target_compile_options(gnnbed_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                            -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
