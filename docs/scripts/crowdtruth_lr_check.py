# Independent check of the CrowdTruth RelDir comparison in docs/text-predict-eval.md: does training on
# every label beat training on majority labels at predicting held-out majority labels? Run from the
# repository root with Debian python3-sklearn: /usr/bin/python3 docs/scripts/crowdtruth_lr_check.py
# (reads /work/shared/data; not part of the tests).
import csv, re, collections, numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize
from sklearn.linear_model import LogisticRegression
from scipy.sparse import hstack
D='/work/shared/data/crowdtruth_medical_relation_direction/'
items={r['item_id']:r for r in csv.DictReader(open(D+'items.csv'))}
labs=collections.defaultdict(list)
for r in csv.DictReader(open(D+'ratings.csv')): labs[r['item_id']].append(r['label'])
classes=['term1_to_term2','term2_to_term1','no_relation']
ids=[i for i in items if labs[i]]
cnt=np.array([[labs[i].count(c) for c in classes] for i in ids],float)
maj=np.full(len(ids),-1)
for n,row in enumerate(cnt):
    m=row.max()
    if (row==m).sum()==1: maj[n]=row.argmax()
print('items',len(ids),'majority shares',np.bincount(maj[maj>=0])/ (maj>=0).sum(),'raw shares',cnt.sum(0)/cnt.sum())
def joined(i):
    r=items[i]; return ' '.join([r['term1'],r['term2'],r['sentence']])
def marked(i):
    r=items[i]; s=r['sentence']
    s=s.replace(r['term1'],' XTERMONE ').replace(r['term2'],' XTERMTWO ')
    return s
def fieldtok(i):
    r=items[i]
    toks=['rel_'+w for w in re.findall(r'\w+',r['relation'].lower())]
    toks+=['t1_'+w for w in re.findall(r'\w+',r['term1'].lower())]
    toks+=['t2_'+w for w in re.findall(r'\w+',r['term2'].lower())]
    return ' '.join(toks)
# Same 10 folds for every setting; one column vectoriser per column (as concord's text:COLUMN terms),
# rows scaled to unit norm per column, then logistic regression trained on majority labels ("maj") or on
# every label with equal weight (C/7 for the ~7 labels per item, "raw"); accuracy against held-out
# majority labels (items with a unique majority).
from scipy.sparse import hstack
rng=np.random.default_rng(1); fold=rng.permutation(len(ids))%10
smart=set(open('textfeat/stopwords/smart.txt').read().split())
for usecols in [['relation','term1','term2'], ['relation','term1','term2','sentence']]:
  for mf in [None, 300]:
    for sw in ['smart','none']:
      for C in [1,3]:
        a1=a2=0
        for f in range(10):
          tr=np.where(fold!=f)[0]; te=np.where(fold==f)[0]
          Xs=[]
          for c in usecols:
              txt=[items[i][c] for i in ids]
              v=CountVectorizer(min_df=2,max_features=mf,stop_words=(list(smart) if sw=='smart' else None)); v.fit([txt[j] for j in tr]); Xs.append(normalize(v.transform(txt)))
          X=hstack(Xs).tocsr()
          trm=tr[maj[tr]>=0]; tem=te[maj[te]>=0]
          m1=LogisticRegression(C=C,max_iter=2000).fit(X[trm],maj[trm])
          rows=[];ys=[];w=[]
          for j in tr:
              for k in range(3):
                  if cnt[j,k]>0: rows.append(j); ys.append(k); w.append(cnt[j,k])
          m2=LogisticRegression(C=C/7,max_iter=2000).fit(X[rows],ys,sample_weight=w)
          a1+=(m1.predict(X[tem])==maj[tem]).sum(); a2+=(m2.predict(X[tem])==maj[tem]).sum()
        n=(maj>=0).sum(); print(usecols,mf,sw,C,'maj %.3f raw %.3f'%(a1/n,a2/n),flush=True)
