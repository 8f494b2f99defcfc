from lm_eval_rul.cli import main

if __name__ == "__main__":
    main()
