#!/usr/bin/env bash
# Re-create the console logs of tests/data/logs/frameworks/ with the real libraries, captured as users
# capture them: `python train.py > train.log 2>&1`, `python train.py 2>&1 | tee train.log`, and a
# terminal session recorded by `script` (the bars and colour a terminal shows). Run from the repo root:
#   bash tests/frameworks_logs/make_logs.sh [NAME_FILTER]
# Each run takes seconds on one CPU core. The logs differ from run to run in timings only.
set -u
PY=${PY:-.venv/bin/python}
OUT=tests/data/logs/frameworks
SRC=tests/frameworks_logs
TMP=$(mktemp -d)
mkdir -p "$OUT"
export TERM=xterm-256color KERAS_BACKEND=torch PYTHONHASHSEED=0 TOKENIZERS_PARALLELISM=false
export HF_HUB_OFFLINE=1 MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR=false CUDA_VISIBLE_DEVICES=""
want() { [ -z "${1:-}" ] || [[ "$2" =~ $1 ]]; }  # NAME_FILTER: a regular expression
redirect() {  # name, command...: python train.py > train.log 2>&1
  local name=$1; shift
  want "${FILTER:-}" "$name" || return 0
  echo "== $name: $* > $name.log 2>&1"
  (cd "$TMP" && "$@") > "$OUT/$name.log" 2>&1
}
tee_capture() {  # name, command...: python train.py 2>&1 | tee train.log
  local name=$1; shift
  want "${FILTER:-}" "$name" || return 0
  echo "== $name: $* 2>&1 | tee $name.log"
  (cd "$TMP" && "$@") 2>&1 | tee "$OUT/$name.log" > /dev/null
}
tty_capture() {  # name, command: script -q -c "python train.py" train.log (a terminal session)
  local name=$1; shift
  want "${FILTER:-}" "$name" || return 0
  echo "== $name: script -q -c '$*' $name.log"
  (cd "$TMP" && script -q -e -c "$*" /dev/null) > "$OUT/$name.log" 2>&1 < /dev/null
}
FILTER=${1:-}
ROOT=$(pwd)
P="$ROOT/$PY"
S="$ROOT/$SRC"
redirect keras3-verbose1-healthy "$P" "$S/keras_fit.py" 1 healthy
tee_capture keras3-verbose1-healthy-tee "$P" "$S/keras_fit.py" 1 healthy
tty_capture keras3-verbose1-healthy-tty "$P" "$S/keras_fit.py" 1 healthy
redirect keras3-verbose2-healthy "$P" "$S/keras_fit.py" 2 healthy
redirect keras3-verbose1-diverge "$P" "$S/keras_fit.py" 1 diverge
redirect keras3-verbose2-diverge "$P" "$S/keras_fit.py" 2 diverge
redirect lightning2-healthy "$P" "$S/lightning_fit.py" healthy "$TMP/pl"
tty_capture lightning2-healthy-tty "$P" "$S/lightning_fit.py" healthy "$TMP/pl"
redirect lightning2-diverge "$P" "$S/lightning_fit.py" diverge "$TMP/pl"
redirect lightning2-tqdm-healthy "$P" "$S/lightning_fit.py" healthy "$TMP/pl" tqdm
redirect lightning2-tqdm-diverge "$P" "$S/lightning_fit.py" diverge "$TMP/pl" tqdm
redirect hf-trainer-healthy "$P" "$S/hf_trainer.py" healthy "$TMP/hf"
redirect hf-trainer-diverge "$P" "$S/hf_trainer.py" diverge "$TMP/hf"
redirect accelerate-healthy "$P" "$S/accelerate_loop.py" healthy
tee_capture accelerate-diverge-tee "$P" "$S/accelerate_loop.py" diverge
redirect timm-style-healthy "$P" "$S/timm_style.py" healthy
redirect timm-style-overfit "$P" "$S/timm_style.py" overfit
redirect xgboost-early-stop "$P" "$S/xgboost_train.py" early_stop
redirect xgboost-overfit "$P" "$S/xgboost_train.py" overfit
redirect xgboost-sklearn "$P" "$S/xgboost_train.py" sklearn
redirect lightgbm-early-stop "$P" "$S/lightgbm_train.py" early_stop
redirect lightgbm-overfit "$P" "$S/lightgbm_train.py" overfit
redirect tqdm-loop-healthy "$P" "$S/tqdm_loop.py" healthy
tee_capture tqdm-loop-diverge-tee "$P" "$S/tqdm_loop.py" diverge
redirect nanogpt-style-healthy "$P" "$S/nanogpt_style.py" healthy
redirect nanogpt-style-diverge "$P" "$S/nanogpt_style.py" diverge
# Keras 2 (tf_keras) and Lightning 1.x need their own venvs (TensorFlow; pytorch-lightning 1.9 beside
# torch 2.13.0+cpu and setuptools<70): PY_KERAS2=/path/venv/bin/python PY_PL1=/path/venv/bin/python
if [ -x "${PY_KERAS2:-}" ]; then
  redirect keras2-verbose1-healthy env KERAS_IMPL=tf_keras "$PY_KERAS2" "$S/keras_fit.py" 1 healthy
  redirect keras2-verbose2-healthy env KERAS_IMPL=tf_keras "$PY_KERAS2" "$S/keras_fit.py" 2 healthy
  redirect keras2-verbose1-diverge env KERAS_IMPL=tf_keras "$PY_KERAS2" "$S/keras_fit.py" 1 diverge
fi
if [ -x "${PY_PL1:-}" ]; then
  redirect lightning1-healthy "$PY_PL1" "$S/lightning_fit.py" healthy "$TMP/pl1"
  redirect lightning1-diverge "$PY_PL1" "$S/lightning_fit.py" diverge "$TMP/pl1"
fi
# MLflow autolog records of the booster runs, in one real local MLflow file store
if want "$FILTER" mlflow; then
  export MLFLOW_ALLOW_FILE_STORE=true  # MLflow 3 writes a file store only when asked to
  rm -rf "$OUT/mlflow-autolog"
  for m in early_stop overfit; do
    redirect "mlflow-xgboost-$m" "$P" "$S/xgboost_train.py" "$m" "$ROOT/$OUT/mlflow-autolog"
    redirect "mlflow-lightgbm-$m" "$P" "$S/lightgbm_train.py" "$m" "$ROOT/$OUT/mlflow-autolog"
  done
  rm -f "$OUT"/mlflow-*.log
fi
rm -rf "$TMP"
