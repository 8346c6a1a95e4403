#!/usr/bin/python3
"""Training curve of one `train` result: loss and validation accuracy per epoch."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import style  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("result", help="JSON written by train --output")
    parser.add_argument("--output", required=True, help="figure path without extension")
    args = parser.parse_args()
    try:
        with open(args.result) as f:
            result = json.load(f)
        epochs = result["epochs"]
        config = result["config"]
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"plot_training: {args.result}: cannot read a train result: {error}")

    fig, loss_axis = style.figure()
    loss_axis.plot([e["epoch"] for e in epochs], [e["loss"] for e in epochs],
                   color="tab:blue", label="training loss")
    loss_axis.set_xlabel("epoch")
    loss_axis.set_ylabel("training loss (cross-entropy)")
    accuracy_axis = loss_axis.twinx()
    evaluated = [e for e in epochs if "val_accuracy" in e]
    accuracy_axis.plot([e["epoch"] for e in evaluated],
                       [100 * e["val_accuracy"] for e in evaluated],
                       color="tab:orange", label="validation accuracy")
    accuracy_axis.set_ylabel("validation accuracy (%)")
    accuracy_axis.grid(False)
    model = config["model"]
    loss_axis.set_title(f"{result['dataset']['name']}, {model['kind']} "
                        f"({model['num_layers']} layers, hidden {model['hidden']}): "
                        f"test accuracy {100 * result['test_accuracy']:.1f} %")
    handles = loss_axis.get_legend_handles_labels()[0] + accuracy_axis.get_legend_handles_labels()[0]
    loss_axis.legend(handles=handles, loc="center right")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    for path in style.save(fig, args.output):
        print(f"figure written to {path}")


if __name__ == "__main__":
    main()
